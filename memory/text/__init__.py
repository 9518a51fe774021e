"""Text rules shared by every layer, in Chinese and English: language detection, lexicons, cleaning and
segmentation, PII redaction (`privacy`), slot extraction (`slots`) and time zones by name (`zones`).

Pure functions over strings; imports nothing from mnemo but its own modules, so the session layer, query
planning and the write policy can all use it.
"""
