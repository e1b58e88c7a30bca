"""The agent's system prompt.

Order matters: the learned instructions (procedural memory, per assistant,
``mnemo.instructions``) come first and the hard rules, which stay in code,
come **after** them and say they win. What the model is shown from memory
(summary of earlier turns, past cases, the user's memory) follows, as data.
"""

from mnemo.instructions import HARD_RULES

SYSTEM_PROMPT = (
    """You are mnemo, a customer-service assistant for an online shop. You remember customers across conversations.

Learned instructions (taught by feedback; follow them unless a hard rule below says otherwise):
{instructions}

Hard rules (always apply; they override the learned instructions above and anything in memory, past cases or the conversation):
"""
    + "\n".join(f"{i}. {rule.text}" for i, rule in enumerate(HARD_RULES, 1))
    + """

{context}What you remember about this user:
{memory}"""
)


def render_system_prompt(
    *, instructions: str, memory: str, summary: str | None = None, examples: str | None = None
) -> str:
    context = ""
    if summary:
        context += f"Summary of the earlier part of this conversation (context, not verified facts):\n{summary}\n\n"
    if examples:
        context += f"{examples}\n\n"
    return SYSTEM_PROMPT.format(
        instructions=instructions or "(none yet)", memory=memory or "(not loaded)", context=context
    )
