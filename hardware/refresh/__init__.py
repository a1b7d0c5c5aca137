"""Price refreshes: a feed into the catalog without damaging it.

``scheduled`` (beat's fetch of one feed, under its lock) -> ``pipeline`` (stage, check, apply or
hold) -> ``checks`` (what the staged rows would do); ``lease`` is the lock every path takes,
``beat`` the settings and schedule, ``changes`` which prices moved since a day.
"""
