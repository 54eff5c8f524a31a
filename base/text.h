/* Text from hostile input, for messages: the one UTF-8 decoder and the one
 * escaper of agentbox.  A config value, an annotation entry or a name a
 * tool sent can hold control characters, invalid bytes or the Unicode
 * bidirectional overrides ("Trojan Source"), which would let it forge or
 * reorder the one line of an error; every message quotes such text through
 * ab_quote or ab_escape. */
#ifndef AB_BASE_TEXT_H
#define AB_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sequence at s (at most len bytes): its length (1..4) and *cp, or 0
   when it is not valid UTF-8 (overlong forms, surrogates and code points
   above U+10FFFF are invalid). */
size_t ab_utf8_decode (const char *s, size_t len, uint32_t *cp);
/* Whether buf[0..len) is valid UTF-8. */
bool ab_utf8_valid (const char *buf, size_t len);

/* Code points that must not reach a terminal raw: C0 and C1 controls, DEL,
   the line and paragraph separators, the bidirectional overrides and
   isolates. */
bool ab_must_escape (uint32_t cp);

enum
{
  AB_ESC_QUOTE = 1 << 0, /* wrap in double quotes, escape '"' and '\\' as JSON would */
  AB_ESC_NL = 1 << 1,    /* a newline as "\n" (else "\u000a") */
  AB_ESC_XBYTE = 1 << 2, /* a one-byte control as \xXX (else \u00XX) */
};
/* Copy s (len bytes, or up to its NUL when len is (size_t) -1) into
   buf[size] with what ab_must_escape names as \uXXXX and invalid bytes as
   \xXX; when it does not fit, cut it and end with "...".  Returns buf. */
const char *ab_escape (char *buf, size_t size, const char *s, size_t len, unsigned flags);

/* Room for one quoted value in a message. */
#define AB_QUOTE_SIZE 200
/* s quoted for a message: "value", escaped, cut to fit AB_QUOTE_SIZE. */
static inline const char *
ab_quote (char buf[AB_QUOTE_SIZE], const char *s)
{
  return ab_escape (buf, AB_QUOTE_SIZE, s, (size_t)-1, AB_ESC_QUOTE | AB_ESC_NL);
}

/* A fragment of hostile text (len bytes, not NUL-terminated: an entry of a
   comma-separated annotation) quoted for a message: its first 64 bytes,
   escaped, with "..." inside the quotes when it was cut. */
#define AB_QUOTE_FRAGMENT_SIZE (64 * 6 + 8)
const char *ab_quote_fragment (char buf[AB_QUOTE_FRAGMENT_SIZE], const char *s, size_t len);

#endif
