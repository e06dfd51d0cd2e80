"""How much skill text the model gets (reference s.6); light, so the settings loader can import it."""

BODY_LIMIT = 5 * 1024  # characters of a body per load; a longer one is cut at a line boundary
DEFAULT_BUDGET = 16 * 1024  # characters of skill bodies in context at once (PAICLI_SKILL_BODY_BUDGET)
