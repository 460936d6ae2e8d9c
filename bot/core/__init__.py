"""The pure core: extract panics, match them, decide, render. No network, no platform imports."""
