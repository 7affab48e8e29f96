"""A page's background job: the board every page submits to, and picking a finished job up.

A page keeps only its job's id in session state (under a key such as "tune_job"); each rerun
asks `take_finished` whether the job has ended, and moves its outcome into its own state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from lanes import jobs


@st.cache_resource
def job_board() -> jobs.Board:
    """The process's jobs by id; cached so a module reload (a file edit) does not lose them."""
    return jobs.default_board()


@dataclass(frozen=True)
class Finished:
    """What a page's job left: its result (None if it failed or was lost) and its error."""

    result: Any
    error: str | None


def take_finished(key: str, *, lost: str) -> Finished | None:
    """The outcome of the job whose id is in `st.session_state[key]`, once it has ended (the
    key is then cleared); None while it runs or when there is none. A job this process no
    longer has (the app restarted) ends with the error `lost`."""
    job_id = st.session_state.get(key)
    if not job_id:
        return None
    job = job_board().get(job_id)
    if job is not None and not job.done:
        return None
    st.session_state[key] = None
    return Finished(None, lost) if job is None else Finished(job.result, job.error)


def job_state(
    prefix: str, *, lost: str, keep: Callable[[Any], Any] = lambda result: result
) -> bool:
    """A page's job kept under `{prefix}_job`, its outcome under `{prefix}_result` and
    `{prefix}_error` (all created empty): once the job has ended its result (through `keep`,
    e.g. to plain data) and its error move there. True while the job runs."""
    for part in ("job", "result", "error"):
        st.session_state.setdefault(f"{prefix}_{part}", None)
    finished = take_finished(f"{prefix}_job", lost=lost)
    if finished is not None:
        result = finished.result
        st.session_state[f"{prefix}_result"] = None if result is None else keep(result)
        st.session_state[f"{prefix}_error"] = finished.error
    return bool(st.session_state[f"{prefix}_job"])
