"""The chat turn: the conversation service (lock, recall, prompt, LLM, commit; `conversation`), context
assembly under a token budget (`context`), memory compression, the summary writers, the LLM supersession
judge the long-term writer may ask (`supersession_judge`), the offline responder
and the LLM façade types every upstream implements (`llm`).

The top floor with `governance`: may import `service`, `session`, `outbox`, `longterm`, `recall` and the
leaves; the HTTP client for a real LLM lives in `app.clients`, not here.
"""
