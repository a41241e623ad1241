"""OKLab, OKLCH and OKHSL colours, turned into the sRGB a terminal draws.

pi 1.x writes its themes in ``okhsl(h s l)`` and accepts ``oklch(l c h)``, so pi-tui must read both
to show a pi 1.x theme as pi does. Terminals only know sRGB, so every such value becomes a
``#rrggbb`` once, when the theme is loaded.

The maths is Björn Ottosson's: OKLab ("A perceptual color space for image processing", 2020) with
the matrices CSS Color 4 also uses, and OKHSL ("Two new color spaces for color picking", 2021),
whose saturation is measured against the most colourful sRGB colour of the same hue and
lightness, so that every OKHSL value is inside the sRGB gamut. OKLCH values can lie outside it;
they are brought in by lowering the chroma at a fixed lightness and hue until the colour fits (the
hue and lightness a theme author chose are what the eye holds on to).

The accepted text forms follow pi 1.5.2: space-separated numbers, no commas and no alpha;
``oklch(L C H)`` with L a fraction or a percentage, C a plain number and H in degrees (an optional
``deg``); ``okhsl(H S L)`` with H in degrees (optional ``deg``) and S, L each a fraction or a
percentage. Function names are case-insensitive.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "ColourSyntaxError",
    "linear_srgb_to_oklab",
    "okhsl_to_srgb",
    "oklab_to_linear_srgb",
    "oklch_to_srgb",
    "parse_ok_colour",
    "srgb_to_hex",
    "srgb_to_okhsl",
    "srgb_to_oklab",
]

Triple = tuple[float, float, float]


class ColourSyntaxError(ValueError):
    """An ``okhsl(...)``/``oklch(...)`` text that is malformed or out of range (message says how)."""


# --- sRGB transfer function -------------------------------------------------------------------------


def _to_linear(channel: float) -> float:
    """sRGB-encoded (0-1) to linear light."""
    if channel <= 0.04045:
        return channel / 12.92
    return float(((channel + 0.055) / 1.055) ** 2.4)


def _to_encoded(channel: float) -> float:
    """Linear light to sRGB-encoded (0-1); the sign is kept so out-of-gamut values stay visible."""
    if abs(channel) <= 0.0031308:
        return 12.92 * channel
    return math.copysign(1.055 * abs(channel) ** (1 / 2.4) - 0.055, channel)


# --- OKLab -----------------------------------------------------------------------------------------


def linear_srgb_to_oklab(rgb: Triple) -> Triple:
    """Linear sRGB (0-1) to OKLab (L 0-1, a, b)."""
    r, g, b = rgb
    lms = (
        0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b,
        0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b,
        0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b,
    )
    l_, m_, s_ = (math.copysign(abs(v) ** (1 / 3), v) for v in lms)
    return (
        0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
        1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
        0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_,
    )


def oklab_to_linear_srgb(lab: Triple) -> Triple:
    """OKLab to linear sRGB (channels may fall outside 0-1 for colours sRGB cannot show)."""
    big_l, a, b = lab
    l_ = big_l + 0.3963377774 * a + 0.2158037573 * b
    m_ = big_l - 0.1055613458 * a - 0.0638541728 * b
    s_ = big_l - 0.0894841775 * a - 1.2914855480 * b
    lc, mc, sc = l_**3, m_**3, s_**3
    return (
        4.0767416621 * lc - 3.3077115913 * mc + 0.2309699292 * sc,
        -1.2684380046 * lc + 2.6097574011 * mc - 0.3413193965 * sc,
        -0.0041960863 * lc - 0.7034186147 * mc + 1.7076147010 * sc,
    )


def srgb_to_oklab(rgb: Triple) -> Triple:
    """sRGB-encoded (0-1) to OKLab."""
    return linear_srgb_to_oklab((_to_linear(rgb[0]), _to_linear(rgb[1]), _to_linear(rgb[2])))


def _in_gamut(linear: Triple, epsilon: float = 1e-7) -> bool:
    return all(-epsilon <= channel <= 1 + epsilon for channel in linear)


def _encode(linear: Triple) -> Triple:
    encoded = (_to_encoded(linear[0]), _to_encoded(linear[1]), _to_encoded(linear[2]))
    return (min(1.0, max(0.0, encoded[0])), min(1.0, max(0.0, encoded[1])), min(1.0, max(0.0, encoded[2])))


def oklch_to_srgb(lightness: float, chroma: float, hue_degrees: float) -> Triple:
    """OKLCH to sRGB-encoded (0-1), bringing an out-of-gamut colour in by lowering its chroma.

    The achromatic colour at the same lightness is always inside sRGB, so a bisection between it
    and the asked chroma finds the most colourful colour that fits (within 2^-24 of the chroma).
    """
    radians = math.radians(hue_degrees)
    cos_h, sin_h = math.cos(radians), math.sin(radians)

    def at(c: float) -> Triple:
        return oklab_to_linear_srgb((lightness, c * cos_h, c * sin_h))

    direct = at(chroma)
    if _in_gamut(direct):
        return _encode(direct)
    low, high, best = 0.0, chroma, at(0.0)
    for _ in range(24):
        middle = (low + high) / 2
        candidate = at(middle)
        if _in_gamut(candidate):
            low, best = middle, candidate
        else:
            high = middle
    return _encode(best)


# --- OKHSL -----------------------------------------------------------------------------------------
#
# OKHSL maps (hue, saturation, lightness) into OKLab so that saturation 1 is the sRGB gamut's edge.
# The edge at a hue is described by its "cusp" (the most colourful colour of that hue) and by where
# a line from a grey towards a chroma leaves the gamut; both come from Ottosson's closed-form fits
# refined by one Halley step, which is exact to well under one 8-bit step.

# Rows of the linear-sRGB-from-LMS matrix (red, green, blue), used for the gamut edge.
_RED_ROW = (4.0767416621, -3.3077115913, 0.2309699292)
_GREEN_ROW = (-1.2684380046, 2.6097574011, -0.3413193965)
_BLUE_ROW = (-0.0041960863, -0.7034186147, 1.7076147010)


def _lms_directions(a: float, b: float) -> Triple:
    """How l', m', s' change per unit of chroma along the hue direction (a, b)."""
    return (
        0.3963377774 * a + 0.2158037573 * b,
        -0.1055613458 * a - 0.0638541728 * b,
        -0.0894841775 * a - 1.2914855480 * b,
    )


def _max_saturation(a: float, b: float) -> float:
    """The largest S = C/L on the gamut edge for the normalised hue (a, b)."""
    if -1.88170328 * a - 0.80936493 * b > 1:  # red clips first
        k = (1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245)
        w = _RED_ROW
    elif 1.81444104 * a - 1.19445276 * b > 1:  # green clips first
        k = (0.73956515, -0.45954404, 0.08285427, 0.12541070, 0.14503204)
        w = _GREEN_ROW
    else:  # blue clips first
        k = (1.35733652, -0.00915799, -1.15130210, -0.50559606, 0.00692167)
        w = _BLUE_ROW
    saturation = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b
    k_l, k_m, k_s = _lms_directions(a, b)
    l_, m_, s_ = 1 + saturation * k_l, 1 + saturation * k_m, 1 + saturation * k_s
    value = w[0] * l_**3 + w[1] * m_**3 + w[2] * s_**3
    first = w[0] * 3 * k_l * l_**2 + w[1] * 3 * k_m * m_**2 + w[2] * 3 * k_s * s_**2
    second = w[0] * 6 * k_l**2 * l_ + w[1] * 6 * k_m**2 * m_ + w[2] * 6 * k_s**2 * s_
    return saturation - value * first / (first * first - 0.5 * value * second)


def _cusp(a: float, b: float) -> tuple[float, float]:
    """(L, C) of the most colourful sRGB colour of the hue (a, b)."""
    saturation = _max_saturation(a, b)
    at_max = oklab_to_linear_srgb((1.0, saturation * a, saturation * b))
    lightness = (1 / max(at_max)) ** (1 / 3)
    return lightness, lightness * saturation


def _gamut_intersection(
    a: float, b: float, l1: float, c1: float, l0: float, cusp: tuple[float, float]
) -> float:
    """How far (t) along the line from (l0, 0) to (l1, c1) the gamut edge lies."""
    cusp_l, cusp_c = cusp
    if (l1 - l0) * cusp_c - (cusp_l - l0) * c1 <= 0:  # below the cusp: the edge is a straight line
        return cusp_c * l0 / (c1 * cusp_l + cusp_c * (l0 - l1))
    t = cusp_c * (l0 - 1) / (c1 * (cusp_l - 1) + cusp_c * (l0 - l1))
    d_l, d_c = l1 - l0, c1
    k_l, k_m, k_s = _lms_directions(a, b)
    l_dt, m_dt, s_dt = d_l + d_c * k_l, d_l + d_c * k_m, d_l + d_c * k_s
    lightness, chroma = l0 * (1 - t) + t * l1, t * c1
    l_, m_, s_ = lightness + chroma * k_l, lightness + chroma * k_m, lightness + chroma * k_s
    lms = (l_**3, m_**3, s_**3)
    first = (3 * l_dt * l_**2, 3 * m_dt * m_**2, 3 * s_dt * s_**2)
    second = (6 * l_dt**2 * l_, 6 * m_dt**2 * m_, 6 * s_dt**2 * s_)
    steps = []
    for row in (_RED_ROW, _GREEN_ROW, _BLUE_ROW):
        value = sum(w * v for w, v in zip(row, lms, strict=True)) - 1
        d1 = sum(w * v for w, v in zip(row, first, strict=True))
        d2 = sum(w * v for w, v in zip(row, second, strict=True))
        u = d1 / (d1 * d1 - 0.5 * value * d2)
        steps.append(-value * u if u >= 0 else math.inf)
    return t + min(steps)


def _mid_saturation(a: float, b: float) -> tuple[float, float]:
    """Ottosson's fitted (S, T) for a smooth, rounder gamut used in the middle of OKHSL's range."""
    s = 0.11516993 + 1 / (
        7.44778970
        + 4.15901240 * b
        + a
        * (
            -2.19557347
            + 1.75198401 * b
            + a * (-2.13704948 - 10.02301043 * b + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a))
        )
    )
    t = 0.11239642 + 1 / (
        1.61320320
        - 0.68124379 * b
        + a
        * (
            0.40370612
            + 0.90148123 * b
            + a * (-0.27087943 + 0.61223990 * b + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a))
        )
    )
    return s, t


def _chromas(lightness: float, a: float, b: float) -> Triple:
    """(C_0, C_mid, C_max): the chromas OKHSL saturation 0.8-ish, 0.8 and 1 are anchored to."""
    cusp = _cusp(a, b)
    c_max = _gamut_intersection(a, b, lightness, 1.0, lightness, cusp)
    st_max = (cusp[1] / cusp[0], cusp[1] / (1 - cusp[0]))
    k = c_max / min(lightness * st_max[0], (1 - lightness) * st_max[1])
    s_mid, t_mid = _mid_saturation(a, b)
    c_a, c_b = lightness * s_mid, (1 - lightness) * t_mid
    c_mid = 0.9 * k * math.sqrt(math.sqrt(1 / (1 / c_a**4 + 1 / c_b**4)))
    c_a, c_b = lightness * 0.4, (1 - lightness) * 0.8
    c_0 = math.sqrt(1 / (1 / c_a**2 + 1 / c_b**2))
    return c_0, c_mid, c_max


_TOE_K1 = 0.206
_TOE_K2 = 0.03
_TOE_K3 = (1 + _TOE_K1) / (1 + _TOE_K2)


def _toe(x: float) -> float:
    """OKLab L to OKHSL's lightness (closer to CIELab's L* in the darks)."""
    y = _TOE_K3 * x - _TOE_K1
    return 0.5 * (y + math.sqrt(y * y + 4 * _TOE_K2 * _TOE_K3 * x))


def _toe_inverse(x: float) -> float:
    return (x * x + _TOE_K1 * x) / (_TOE_K3 * (x + _TOE_K2))


_MID = 0.8
_MID_INVERSE = 1.25


def okhsl_to_srgb(hue_degrees: float, saturation: float, lightness: float) -> Triple:
    """OKHSL (hue in degrees, saturation and lightness 0-1) to sRGB-encoded (0-1)."""
    if lightness >= 1:
        return (1.0, 1.0, 1.0)
    if lightness <= 0:
        return (0.0, 0.0, 0.0)
    radians = math.radians(hue_degrees)
    a_, b_ = math.cos(radians), math.sin(radians)
    big_l = _toe_inverse(lightness)
    if saturation <= 0:
        return _encode(oklab_to_linear_srgb((big_l, 0.0, 0.0)))
    c_0, c_mid, c_max = _chromas(big_l, a_, b_)
    if saturation < _MID:
        t = _MID_INVERSE * saturation
        k_1 = _MID * c_0
        k_2 = 1 - k_1 / c_mid
        chroma = t * k_1 / (1 - k_2 * t)
    else:
        t = (saturation - _MID) / (1 - _MID)
        k_0 = c_mid
        k_1 = (1 - _MID) * c_mid * c_mid * _MID_INVERSE * _MID_INVERSE / c_0
        k_2 = 1 - k_1 / (c_max - c_mid)
        chroma = k_0 + t * k_1 / (1 - k_2 * t)
    return _encode(oklab_to_linear_srgb((big_l, chroma * a_, chroma * b_)))


def srgb_to_okhsl(rgb: Triple) -> Triple:
    """sRGB-encoded (0-1) to OKHSL (hue in degrees, saturation and lightness 0-1)."""
    big_l, a, b = srgb_to_oklab(rgb)
    chroma = math.hypot(a, b)
    lightness = _toe(big_l)
    if chroma < 1e-9 or big_l <= 0 or big_l >= 1:
        return 0.0, 0.0, min(1.0, max(0.0, lightness))
    a_, b_ = a / chroma, b / chroma
    hue = math.degrees(math.atan2(b, a)) % 360
    c_0, c_mid, c_max = _chromas(big_l, a_, b_)
    if chroma < c_mid:
        k_1 = _MID * c_0
        k_2 = 1 - k_1 / c_mid
        saturation = chroma / (k_1 + k_2 * chroma) * _MID
    else:
        k_0 = c_mid
        k_1 = (1 - _MID) * c_mid * c_mid * _MID_INVERSE * _MID_INVERSE / c_0
        k_2 = 1 - k_1 / (c_max - c_mid)
        t = (chroma - k_0) / (k_1 + k_2 * (chroma - k_0))
        saturation = _MID + (1 - _MID) * t
    return hue, saturation, lightness


def srgb_to_hex(rgb: Triple) -> str:
    """sRGB-encoded (0-1) to ``#rrggbb``, each channel rounded to the nearest 8-bit step."""
    return "#" + "".join(f"{round(min(1.0, max(0.0, c)) * 255):02x}" for c in rgb)


# --- the text forms --------------------------------------------------------------------------------

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_OKLCH_RE = re.compile(rf"oklch\(\s*({_NUMBER})(%)?\s+({_NUMBER})\s+({_NUMBER})(?:deg)?\s*\)", re.IGNORECASE)
_OKHSL_RE = re.compile(
    rf"okhsl\(\s*({_NUMBER})(?:deg)?\s+({_NUMBER})(%)?\s+({_NUMBER})(%)?\s*\)", re.IGNORECASE
)
_FUNCTION_RE = re.compile(r"ok(?:lch|hsl)\(", re.IGNORECASE)


def is_ok_function(text: str) -> bool:
    """Whether ``text`` is written as ``oklch(...)``/``okhsl(...)`` (well-formed or not), so it is a
    colour of its own rather than the name of a var."""
    return _FUNCTION_RE.match(text) is not None


def parse_ok_colour(text: str) -> str:
    """``oklch(...)`` or ``okhsl(...)`` to ``#rrggbb``; :class:`ColourSyntaxError` says what is wrong."""
    found = _OKLCH_RE.fullmatch(text)
    if found:
        lightness = float(found.group(1)) / (100 if found.group(2) else 1)
        chroma, hue = float(found.group(3)), float(found.group(4))
        if not 0 <= lightness <= 1:
            raise ColourSyntaxError(f'lightness in "{text}" must be 0-1 or 0%-100%')
        if chroma < 0:
            raise ColourSyntaxError(f'chroma in "{text}" must not be negative')
        if not all(math.isfinite(v) for v in (chroma, hue)):
            raise ColourSyntaxError(f'"{text}" has a number that is not finite')
        return srgb_to_hex(oklch_to_srgb(lightness, chroma, hue % 360))
    found = _OKHSL_RE.fullmatch(text)
    if found:
        hue = float(found.group(1))
        saturation = float(found.group(2)) / (100 if found.group(3) else 1)
        lightness = float(found.group(4)) / (100 if found.group(5) else 1)
        if not math.isfinite(hue):
            raise ColourSyntaxError(f'hue in "{text}" is not finite')
        if not 0 <= saturation <= 1:
            raise ColourSyntaxError(f'saturation in "{text}" must be 0-1 or 0%-100%')
        if not 0 <= lightness <= 1:
            raise ColourSyntaxError(f'lightness in "{text}" must be 0-1 or 0%-100%')
        return srgb_to_hex(okhsl_to_srgb(hue % 360, saturation, lightness))
    kind = text[:5].lower()
    form = "oklch(L C H)" if kind == "oklch" else "okhsl(H S L)"
    raise ColourSyntaxError(f'bad colour "{text}" (expected {form}: numbers separated by spaces)')
