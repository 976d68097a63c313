"""The coding agents' own programs, installed from npm at pinned versions (``pins.json``),
run by the tests against a scripted model (``tests.support.scripted_model``) through the
configs ``lanes init`` writes (SPEC "Real agent programs").

``install.py`` installs a pinned (or the newest) version once into a cache shared by runs;
``base.py`` is what every program's driver (``programs/<agent>.py``) provides.
"""
