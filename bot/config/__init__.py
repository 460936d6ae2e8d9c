"""Configuration, read once before any stage runs: typed settings from the environment and
`.env` (settings.py, validated at start-up; SettingsError names what is wrong), logging set up
from them (logs.py), and keeping secrets out of what is printed or logged (redact.py).
"""
