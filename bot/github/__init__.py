"""The GitHub adapter of the pipeline: an issue's text in, one comment and some labels out.

A webhook delivery (or a poll) becomes a durable job; the worker runs each job through the
pipeline: read -> decide -> plan -> write -> remember.

Pure (plain values in and out, no store, GitHub or clock):
- `webhook`: signature check, payload parsing, which deliveries become jobs;
- `triage_command.parse`: maintainers' `/triage` commands in a comment;
- `triage_command.handle`: what a command changes, the answer under the maintainers' controls;
- `decide`: what an issue should show (verdict, labels, comment);
- `planner`: the writes that get it there;
- `labels`, `duplicates`: the labels an answer earns, the other issues it names (their
  `load_*` read TRIAGE_CONFIG);
- `marker`: the bot's hidden comment marker.

I/O:
- `adapter`: every GitHub API call of the answer path (`auth` builds the PyGithub clients);
- `gate`: per-installation rate-limit gates and write pacing;
- `metrics`: the counters `/metrics` shows;
- `triage_command.run`: carries the commands out through the adapter and the store;
- `pipeline`: one issue through the stages; `worker`: the job queue; `poll`: changes since a
  cursor; `backfill`: past issues, before the bot came.
"""
