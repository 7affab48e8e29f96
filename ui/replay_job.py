"""The Sessions page's import replay: a transcript replayed through the chosen strategies as a
background job (lanes/jobs.py), its progress, and the session it saved once it is done.
Draws with Streamlit; the replay itself is engines/transcripts.py."""

from __future__ import annotations

import streamlit as st

from engines import transcripts
from lanes import jobs
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from storage.store import Store
from ui import persistence
from ui.app_state import AppConfig, keyed_settings, maintenance_settings
from ui.page_jobs import job_board, take_finished
from ui.safe import md
from ui.session_view import flash

JOB = "sessions_job"  # the running replay's job id


def start_replay(
    store: Store,
    transcript: transcripts.Transcript,
    strategies: list[str],
    mode: str,
    system_prompt: str,
    name: str,
    config: AppConfig,
) -> None:
    provider = keyed_settings(config.provider)
    maintenance = maintenance_settings(config.provider)
    # each picked strategy's lanes on the main page (their own models too), else its defaults
    chosen = [
        lane
        for s in strategies
        for lane in [x for x in config.lanes if x.name == s]
        or [LaneSpec(s, REGISTRY[s].defaults())]
    ]
    run = config.replace(system_prompt=system_prompt, lanes=tuple(chosen))
    lanes = persistence.lane_specs(run)
    app = persistence.app_settings(run)

    def work(job: jobs.Job) -> str:
        session = transcripts.replay(
            transcript,
            lanes,
            provider=provider,
            maintenance=maintenance,
            mode=mode,
            system_prompt=system_prompt,
            name=name,
            on_start=lambda s: store.track(s, app=app, source=f"import · {mode}"),
            on_turn=lambda done, total: job.set_progress((done, total)),
            cancelled=job.cancel_event.is_set,
            lean=True,  # the page reads the session back from the store
        )
        return session.id

    job = job_board().submit(work, name="replay")
    st.session_state[JOB] = job.id


@st.fragment(run_every=1.0)
def replay_progress() -> None:
    job = job_board().get(st.session_state[JOB])
    if job is None or job.done:
        st.rerun()
        return
    done, total = job.progress or (0, 1)
    st.progress(
        done / max(1, total), text=f"Replayed {done} of {total} turns · {job.elapsed:.0f} s"
    )
    if st.button("■ Stop (keep the turns so far)", disabled=job.cancel_event.is_set()):
        job.cancel()


def collect_replay() -> None:
    finished = take_finished(JOB, lost="it was lost (the app restarted): run it again")
    if finished is None:
        return
    if finished.error:
        st.error(md("The replay failed: {}", finished.error))
    elif finished.result:
        st.session_state.sessions_selected = finished.result
        st.session_state.sessions_open = finished.result
        flash(
            "Replay saved: it is selected in the Saved sessions tab (open it, continue it, "
            "or export it)."
        )
        st.rerun()
