"""Campaigns: one agent configuration over a set of variants, one job per variant through the job
machinery (app/api/jobs.py's store, app/runner.py), with a concurrency limit, a spending cap, cancel
and resume of the whole, and the report (app/campaigns/report.py)."""
