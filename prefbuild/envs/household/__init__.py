"""The ``household`` env: a procedurally generated, ALFWorld-compatible household text world.

Modules: ``catalog`` (types and rules as data), ``scene`` (layouts and object placement),
``tasks`` (the six ALFWorld task types), ``engine`` (the state machine and its exact text),
``expert`` (oracle and searching experts), ``priors`` (where objects are plausibly found),
``env`` (the ``HouseholdEnv`` plug-in). This package imports nothing at load time so that
``protocols`` can import the engine without a cycle through ``env``.
"""
