"""The GitHub side: webhooks, the job queue and worker, PyGithub adapter, polling, App auth."""
