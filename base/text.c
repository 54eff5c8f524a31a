#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/text.h"

size_t
ab_utf8_decode (const char *str, size_t len, uint32_t *cp)
{
  const unsigned char *s = (const unsigned char *)str;
  size_t n, i;
  uint32_t v;

  if (len == 0)
    return 0;
  if (s[0] < 0x80)
    return *cp = s[0], 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2, v = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3, v = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4, v = s[0] & 0x07;
  else
    return 0;
  if (len < n)
    return 0;
  for (i = 1; i < n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      v = (v << 6) | (s[i] & 0x3f);
    }
  /* Overlong forms decode to a character a shorter form spells, and
     surrogates are not characters: both are ways past a byte filter. */
  if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return n;
}

bool
ab_utf8_valid (const char *buf, size_t len)
{
  size_t i = 0;
  uint32_t cp;

  while (i < len)
    {
      size_t n;
      if ((unsigned char)buf[i] < 0x80)
        {
          i++; /* ASCII, most of any config: no decode */
          continue;
        }
      n = ab_utf8_decode (buf + i, len - i, &cp);
      if (n == 0)
        return false;
      i += n;
    }
  return true;
}

bool
ab_must_escape (uint32_t cp)
{
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029
         || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *
ab_escape (char *buf, size_t size, const char *s, size_t len, unsigned flags)
{
  const char *close = (flags & AB_ESC_QUOTE) ? "\"" : "";
  size_t o = 0, i = 0, lc = strlen (close);

  if (len == (size_t)-1)
    len = strlen (s);
  if (flags & AB_ESC_QUOTE)
    buf[o++] = '"';
  while (i < len)
    {
      uint32_t cp;
      size_t n = ab_utf8_decode (s + i, len - i, &cp);
      char esc[8];
      size_t elen;

      if (n == 0)
        elen = (size_t)snprintf (esc, sizeof esc, "\\x%02x", (unsigned char)s[i]), n = 1;
      else if ((flags & AB_ESC_QUOTE) && (cp == '"' || cp == '\\'))
        esc[0] = '\\', esc[1] = (char)cp, elen = 2;
      else if (cp == '\n' && (flags & AB_ESC_NL))
        memcpy (esc, "\\n", 2), elen = 2;
      else if (ab_must_escape (cp) && n == 1 && (flags & AB_ESC_XBYTE))
        elen = (size_t)snprintf (esc, sizeof esc, "\\x%02x", (unsigned)cp);
      else if (ab_must_escape (cp))
        elen = (size_t)snprintf (esc, sizeof esc, "\\u%04x", (unsigned)cp);
      else
        memcpy (esc, s + i, n), elen = n;
      /* Keep room for the closing quote, "..." and the NUL. */
      if (o + elen + lc + 4 > size)
        {
          memcpy (buf + o, close, lc);
          memcpy (buf + o + lc, "...", 4);
          return buf;
        }
      memcpy (buf + o, esc, elen);
      o += elen;
      i += n;
    }
  memcpy (buf + o, close, lc + 1);
  return buf;
}

const char *
ab_quote_fragment (char buf[AB_QUOTE_FRAGMENT_SIZE], const char *s, size_t len)
{
  ab_escape (buf, AB_QUOTE_FRAGMENT_SIZE - 3, s, len > 64 ? 64 : len, AB_ESC_QUOTE | AB_ESC_XBYTE);
  if (len > 64)
    memcpy (buf + strlen (buf) - 1, "...\"", 5);
  return buf;
}
