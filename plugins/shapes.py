"""A user's own memory code as a lab strategy, whatever shape it has.

Accepted shapes (`adapt` tells them apart, and says what it found when none fits):

* the lab's own strategy protocol: a `memory.strategies.base.Strategy` subclass;
* the seeds' shape: a class with `add_message(role, content)` or `add(role, content)` and
  `get_messages_for_api()` or `get_messages()`, built with the system prompt when its
  constructor takes an argument (`system_prompt`, `system` or the first positional one);
* a plain function `(system, history, new_message) -> messages`, history being the earlier
  turns as `{"role", "content"}` dicts;
* a LangChain `BaseChatMessageHistory` class (duck-typed: `messages` and `add_message`),
  which the lab fills and sends after the system prompt.

Messages may come back as `{"role", "content"}` dicts, `(role, content)` pairs or LangChain
messages. The user's code decides what is sent; the lab maps it with the one mapping of
plugins/frameworks/base.py and counts it. A class or function may declare `budget` (an
attribute): the contract check holds it to that.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from memory.strategies.base import Strategy
from plugins.frameworks.base import Framework, FrameworkError, FrameworkStrategy, Sent, text_of

USER_CODE = Framework("your code", "memory-lab", "memory")
SHAPES = (
    "a memory.strategies.base.Strategy subclass",
    "a class with add_message(role, content) or add(role, content) and "
    "get_messages_for_api() or get_messages()",
    "a function (system, history, new_message) -> messages",
    "a LangChain BaseChatMessageHistory class (messages, add_message)",
)


class ShapeError(FrameworkError):
    """User code of none of the accepted shapes, or returning what the lab cannot send."""


def read_messages(value: Any, *, where: str) -> list[tuple[str, str]]:
    """(role, text) pairs from what user code returned; ShapeError says what was found."""
    if not isinstance(value, list | tuple):
        raise ShapeError(f"{where} must return a list of messages, got {type(value).__name__}")
    out: list[tuple[str, str]] = []
    for i, item in enumerate(value):
        if isinstance(item, dict) and "role" in item and "content" in item:
            role, content = item["role"], item["content"]
        elif isinstance(item, tuple | list) and len(item) == 2:
            role, content = item
        elif hasattr(item, "type") and hasattr(item, "content"):
            role = {"human": "user", "ai": "assistant"}.get(item.type, item.type)
            content = item.content
        else:
            raise ShapeError(
                f"{where} returned item {i} as {type(item).__name__}: a message is a "
                '{"role", "content"} dict, a (role, content) pair or a LangChain message'
            )
        if role not in ("system", "user", "assistant"):
            raise ShapeError(f"{where} returned item {i} with role {role!r}")
        out.append((str(role), text_of(content)))
    return out


class UserStrategy(FrameworkStrategy):
    """Base of the adapted shapes: the user's object (or nothing, for a function) is the
    state; which history turns were sent is found by matching the texts, newest first."""

    framework = USER_CODE
    target: ClassVar[Any] = None
    where: ClassVar[str] = ""

    def _origins(self, pairs: Sequence[tuple[str, str]], user_text: str) -> list[Sent]:
        turns = self.history.turns
        out: list[Sent] = []
        last = len(pairs) - 1
        cursor = len(turns)  # match history messages newest first, in order
        for i in range(last, -1, -1):
            role, text = pairs[i]
            origin = None
            if i == last and role == "user" and text == user_text:
                origin = "new"
            elif role in ("user", "assistant"):
                for j in range(cursor, 0, -1):
                    turn = turns[j - 1]
                    if (turn.user if role == "user" else turn.assistant) == text:
                        origin, cursor = f"{'u' if role == 'user' else 'a'}{j}", j
                        break
            out.append(Sent(role, text, origin))
        out.reverse()
        return out

    def _clone(self, state: Any) -> Any:
        try:
            return copy.deepcopy(state)
        except Exception as exc:
            raise ShapeError(f"{self.where}: the memory object cannot be copied ({exc})") from exc


def _fn_strategy(name: str, fn: Callable[..., Any], where: str) -> type[Strategy]:
    class FunctionStrategy(UserStrategy):
        def _start(self) -> None:
            return None

        def _before_model(self, state: Any, user_text: str) -> tuple[list[Sent], Any]:
            history = [m.as_dict() for t in self.history.turns for m in t.messages()]
            pairs = read_messages(fn(self.system_prompt, history, user_text), where=where)
            return self._origins(pairs, user_text), None

        def _after_reply(self, state: Any, user_text: str, reply: str) -> None:
            return None

    return _named(FunctionStrategy, name, fn, where)


def _object_strategy(name: str, cls: type, where: str, *, history_api: bool) -> type[Strategy]:
    add = "add_message" if hasattr(cls, "add_message") else "add"
    get = "get_messages_for_api" if hasattr(cls, "get_messages_for_api") else "get_messages"

    class ObjectStrategy(UserStrategy):
        def _start(self) -> Any:
            return _construct(cls, self.system_prompt)

        def _add(self, state: Any, role: str, text: str) -> None:
            if history_api:
                from langchain_core.messages import AIMessage, HumanMessage

                state.add_message(HumanMessage(text) if role == "user" else AIMessage(text))
            else:
                getattr(state, add)(role, text)

        def _before_model(self, state: Any, user_text: str) -> tuple[list[Sent], Any]:
            self._add(state, "user", user_text)
            if history_api:
                pairs = [("system", self.system_prompt)] if self.system_prompt else []
                pairs += read_messages(list(state.messages), where=f"{where}.messages")
            else:
                pairs = read_messages(getattr(state, get)(), where=f"{where}.{get}()")
                if self.system_prompt and not any(r == "system" for r, _ in pairs):
                    pairs.insert(0, ("system", self.system_prompt))
            return self._origins(pairs, user_text), state

        def _after_reply(self, state: Any, user_text: str, reply: str) -> Any:
            self._add(state, "assistant", reply)
            return state

    return _named(ObjectStrategy, name, cls, where)


def _construct(cls: type, system_prompt: str) -> Any:
    """The user's class built with the system prompt where its constructor takes one."""
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = {p.name for p in params}
    for keyword in ("system_prompt", "system"):
        if keyword in names:
            return cls(**{keyword: system_prompt})
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return cls(system_prompt) if required else cls()


def _named(base: type[UserStrategy], name: str, target: Any, where: str) -> type[Strategy]:
    doc = inspect.getdoc(target) or ""
    first = doc.splitlines()[0] if doc else f"{where} (your code)"
    attrs = {
        "name": name,
        "title": getattr(target, "title", None) or name,
        "description": first,
        "target": target,
        "where": where,
        "declared_budget": getattr(target, "budget", None),
    }
    return type(f"User_{name}", (base,), attrs)


def adapt(name: str, obj: Any, where: str) -> type[Strategy]:
    """A Strategy class for `obj` (user code found at `where`); ShapeError names the shapes
    accepted and what `obj` is."""
    if inspect.isclass(obj) and issubclass(obj, Strategy):
        if not obj.name:
            raise ShapeError(f"{where}: a Strategy subclass needs a `name`")
        return obj
    if inspect.isclass(obj):
        if hasattr(obj, "messages") and hasattr(obj, "add_message") and hasattr(obj, "clear"):
            return _object_strategy(name, obj, where, history_api=True)
        has_add = hasattr(obj, "add_message") or hasattr(obj, "add")
        has_get = hasattr(obj, "get_messages_for_api") or hasattr(obj, "get_messages")
        if has_add and has_get:
            return _object_strategy(name, obj, where, history_api=False)
        methods = sorted(
            n for n, _ in inspect.getmembers(obj, inspect.isfunction) if not n.startswith("_")
        )
        found = f"a class with methods {', '.join(methods) or '(none)'}"
    elif callable(obj):
        try:
            arity = len(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            arity = 3
        if arity == 3:
            return _fn_strategy(name, obj, where)
        found = f"a function of {arity} argument(s)"
    else:
        found = f"a {type(obj).__name__}"
    raise ShapeError(f"{where} is {found}; expected one of: " + "; ".join(SHAPES))
