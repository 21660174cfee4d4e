"""Labelers for tool-calling trajectories (code, bfcl, tau2 and plug-in tool envs).

They read the typed records a tool env writes: ``Step.tool_calls`` (what the model called),
``Step.facts.tools`` (``ToolCallFacts``: how each call went), ``Step.facts.problems`` (what
the Hermes parser found wrong), the tool results in the next step's ``observation_messages``
and ``Trajectory.tools`` (the JSON Schemas the model was offered). Every label quotes the
call, the error or the text it is about.

- ``calls``: malformed_tool_call, unknown_tool, invalid_arguments, tool_error, repeated_tool_call
- ``answers``: no_tool_use, hallucinated_tool_output, tool_wrong_answer (mode ``wrong_answer``)
- ``length``: overlong (response tokens over a budget, graded inside a soft buffer)
"""
