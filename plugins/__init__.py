"""Strategies from outside the lab's own eight: framework memories run through the framework's
own code (plugins/frameworks/), a user's memory class or function loaded from a file or an
installed package (plugins/loading.py, plugins/shapes.py), the contract check run on any of
them (plugins/contracts.py), and a strategy's rule written back as framework code
(plugins/export_code.py).

May import: the standard library, memory/, and — lazily, inside the function that needs one —
the framework packages (langchain-core, langchain, langchain-classic, langgraph, langmem,
llama-index-core, semantic-kernel) and hypothesis. Never streamlit, an SDK client, the
network, or the lab's other packages.
"""
