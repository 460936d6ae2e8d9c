"""What users hit, read back from the store after the pipeline ran: answers by record, precision
from feedback, the uncatalogued panics worth a record (report.py; pure: rows in, figures and
text/HTML out). `triage-bot stats` (bot.cli.stats) and `GET /stats` (bot.server) show it.
"""
