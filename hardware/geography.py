"""Which part of the world a provider's region is in, read from the region's code alone.

Plain Python, no database: the rule behind ``hardware.models.Region.geography``, which a region
gets when it is created (a catalog editor may correct it afterwards). Codes are written many ways,
and the rule reads each the way its providers write it:

- ``"City, CC, Continent"`` (Vast): the ISO country code ``CC``;
- a country code alone, perhaps numbered (Lium ``DE``, Jarvislabs ``IN1``);
- a prefix before the first separator (AWS and Oracle ``eu-``, ``ap-``, ``sa-`` São Paulo,
  ``me-``; Cudo ``no-``, Seeweb ``it-``; Lambda and GCP ``europe-``, ``asia-``,
  ``northamerica-``);
- a country or continent word anywhere (Shadeform ``frankfurt-germany-5``, Hyperstack
  ``NORWAY-1``);
- one word with the place inside it (Azure ``westeurope``, ``australiaeast``, ``eastus``).

A code none of these settles (Daytona's ``earth``) maps to no geography: never guessed.
"""

import re

AMERICAS = "americas"
EUROPE = "europe"
ASIA_PACIFIC = "asia-pacific"
OTHER = "other"
GEOGRAPHIES = (AMERICAS, EUROPE, ASIA_PACIFIC, OTHER)
"""Every geography, in the order pages list them; ``other`` is the Middle East and Africa."""
LABELS = {
    AMERICAS: "Americas",
    EUROPE: "Europe",
    ASIA_PACIFIC: "Asia-Pacific",
    OTHER: "Other (Middle East, Africa)",
}

_COUNTRY_CODES = {
    AMERICAS: "us ca mx br ar cl co pe",
    EUROPE: (
        "gb uk ie fr de nl be lu ch at it es pt dk no se fi is pl cz sk hu ro bg gr hr si rs "
        "mk al ee lv lt ua md ru by"
    ),
    ASIA_PACIFIC: "jp kr cn hk tw sg my th vn id ph in au nz",
    OTHER: "il ae sa qa bh kw om tr za eg ng ke ma",
}
COUNTRIES = {code: geo for geo, codes in _COUNTRY_CODES.items() for code in codes.split()}
"""ISO 3166 country codes (and ``uk``) to their geography."""

PREFIXES = {
    **COUNTRIES,
    "eu": EUROPE,
    "ap": ASIA_PACIFIC,
    "sa": AMERICAS,
    "me": OTHER,
    "af": OTHER,
}
"""A code's first part as AWS, Oracle and others write it: ``sa-east-1`` is São Paulo there,
not Saudi Arabia, ``me-`` the Middle East and ``af-`` Africa."""

_WORDS = {
    AMERICAS: (
        "usa northamerica southamerica america canada mexico brazil chile argentina "
        "virginia ohio oregon california texas"
    ),
    EUROPE: (
        "europe uk germany netherlands france finland norway sweden iceland poland spain italy "
        "switzerland ireland england britain denmark austria belgium portugal"
    ),
    ASIA_PACIFIC: (
        "asia australia japan korea india singapore taiwan indonesia malaysia thailand vietnam "
        "newzealand hongkong china oceania"
    ),
    OTHER: "israel uae qatar saudi southafrica africa middleeast bahrain",
}
WORDS = {word: geo for geo, words in _WORDS.items() for word in words.split()}
"""Country and continent words to their geography."""
# Inside one word, the longest names first ("southafrica" before "africa"), and none shorter than
# four letters, which could be part of another name.
_INSIDE = sorted((word for word in WORDS if len(word) >= 4), key=len, reverse=True)
_VAST = re.compile(r"^[^,]*,\s*([A-Za-z]{2})\s*,\s*[A-Za-z]{2}\s*$")


def region_geography(code: str) -> str | None:
    """The geography of the region ``code`` (one of ``GEOGRAPHIES``), or ``None`` when the code
    does not say where the region is."""
    vast = _VAST.match(code)
    if vast:
        return COUNTRIES.get(vast.group(1).lower())
    words = [w for w in re.split(r"[^a-z]+", code.lower()) if w]
    if not words:
        return None
    if len(words) == 1 and len(words[0]) == 2:
        return COUNTRIES.get(words[0])
    for word in words:
        if word in WORDS:
            return WORDS[word]
    if len(words) > 1 and words[0] in PREFIXES:
        return PREFIXES[words[0]]
    if len(words) == 1:
        return _inside_one_word(words[0])
    return None


def _inside_one_word(word: str) -> str | None:
    """Azure's one-word regions: ``westeurope``, ``uksouth``, ``eastus``, ``uaenorth``."""
    for name in _INSIDE:
        if name in word:
            return WORDS[name]
    if word.startswith("uk"):
        return EUROPE
    if word.startswith("uae"):
        return OTHER
    if word.endswith("us"):
        return AMERICAS
    return None
