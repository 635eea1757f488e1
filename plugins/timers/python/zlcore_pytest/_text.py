"""One line out of a message or an exception, for rows, reasons and reports."""


def first_line(text, limit=500):
    """The first line of `text` (stripped), at most `limit` characters."""
    text = str(text).strip()
    return (text.splitlines()[0] if text else "")[:limit]


def describe(exc, limit=300):
    """`Type: first line of the message`, at most `limit` characters."""
    message = first_line(exc, limit)
    return (f"{type(exc).__name__}: {message}" if message else type(exc).__name__)[:limit]
