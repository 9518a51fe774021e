"""Text rules shared by every layer, in Chinese and English: language detection, lexicons, cleaning and
segmentation, PII redaction (`privacy`) and slot extraction (`slots`).

Pure functions over strings; imports nothing from mnemo but its own modules, so the session layer, query
planning and the write policy can all use it.
"""
