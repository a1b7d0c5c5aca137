"""Text that reads otherwise than it is: the invisible format characters (Unicode category Cf:
the bidirectional overrides, embeddings, isolates and marks, the zero-width characters) that the
catalog refuses in what its editors type, through the API and the admin alike."""

import unicodedata

HIDDEN_MESSAGE = "must not contain direction overrides or invisible characters ({found})"


def hidden_characters(text: str) -> str:
    """The invisible format characters of ``text`` as "U+202E, U+200B", or ``""``."""
    found = sorted({char for char in text if unicodedata.category(char) == "Cf"})
    return ", ".join(f"U+{ord(char):04X}" for char in found)


def hidden_characters_error(text: str) -> str:
    """The message refusing ``text`` at its field, or ``""`` when it holds none."""
    found = hidden_characters(text)
    return HIDDEN_MESSAGE.format(found=found) if found else ""
