/* The bounded JSON reader: every hostile-input class is refused with the
   JSON path of the offending value. */
#include "config.h"

#include "base/gen.h"
#include "base/json.h"
#include "tests/unit/tap.h"

static const char *
parse_error (const char *doc)
{
  static ab_error_t err;
  struct ab_json *j;

  memset (&err, 0, sizeof err);
  j = ab_json_parse (doc, strlen (doc), &ab_json_config_limits, "config.json", &err);
  if (j != NULL)
    {
      ab_json_free (j);
      return NULL;
    }
  return err.msg;
}

static void
test_duplicates (void)
{
  is_str (parse_error ("{\"a\":1,\"a\":2}"), "config.json: duplicate key \"a\"", "duplicate top-level key");
  is_str (parse_error ("{\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"net\",\"type\":\"x\"}]}}"),
          "config.json: linux.namespaces[1]: duplicate key \"type\"", "duplicate key names its object path");
  ok (parse_error ("{\"a\":{\"x\":1},\"b\":{\"x\":1}}") == NULL, "same key in sibling objects is fine");
}

static void
test_utf8_and_nul (void)
{
  is_str (parse_error ("{\"root\":{\"path\":\"a\\u0000b\"}}"), "config.json: root.path: string contains a NUL byte",
          "NUL byte in a string is refused with its path");
  is_str (parse_error ("{\"k\\u0000\":1}"), "config.json: key contains a NUL byte", "NUL byte in a key");
  ok (parse_error ("{\"s\":\"\xff\"}") != NULL, "invalid UTF-8 byte is refused");
  ok (parse_error ("{\"s\":\"\xc0\xaf\"}") != NULL, "overlong UTF-8 is refused");
  ok (parse_error ("{\"s\":\"\xed\xa0\x80\"}") != NULL, "UTF-8 encoded surrogate is refused");
  ok (parse_error ("{\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}") == NULL, "valid multibyte UTF-8 passes");
}

static void
test_limits (void)
{
  char *deep, *big;
  size_t i, n = 200;
  const char *e;

  deep = xmalloc (2 * n + 1);
  for (i = 0; i < n; i++)
    deep[i] = '[';
  for (i = 0; i < n; i++)
    deep[n + i] = ']';
  deep[2 * n] = '\0';
  e = parse_error (deep);
  ok (e && strstr (e, "nesting deeper than 64 levels"), "deep nesting is refused: %s", e ? e : "accepted");
  free (deep);

  big = xmalloc ((200u << 10) + 16);
  strcpy (big, "{\"s\":\"");
  memset (big + 6, 'a', 200u << 10);
  strcpy (big + 6 + (200u << 10), "\"}");
  e = parse_error (big);
  is_str (e, "config.json: s: string longer than 131072 bytes", "over-long string is refused with its path");
  free (big);

  big = xmalloc ((5u << 20) + 1);
  memset (big, ' ', 5u << 20);
  big[0] = '{';
  big[(5u << 20) - 1] = '}';
  big[5u << 20] = '\0';
  is_str (parse_error (big), "config.json: larger than 4194304 bytes", "over-size document is refused");
  free (big);
}

static void
test_syntax (void)
{
  const char *e;

  e = parse_error ("{\"a\":1,}");
  ok (e && strstr (e, "config.json: invalid JSON near byte"), "trailing comma: %s", e ? e : "accepted");
  ok (parse_error ("") != NULL, "empty document is refused");
  ok (parse_error ("{} {}") != NULL, "two documents are refused");
  ok (parse_error ("{\"a\":1} x") != NULL, "trailing garbage is refused");
  ok (parse_error ("/* c */ {}") != NULL, "comments are refused");
}

static void
test_typed (void)
{
  ab_error_t err = { 0 };
  const char *doc = "{\"u\":18446744073709551616,\"i\":-1,\"f\":1.5,\"s\":\"x\",\"big\":4294967296,\"ok\":7}";
  struct ab_json *j = ab_json_parse (doc, strlen (doc), &ab_json_config_limits, "config.json", &err);
  struct ab_jctx c;
  uint64_t u = 0;
  int64_t i = 0;
  struct ab_strv unused = { 0 };

  ok (j != NULL, "typed test document parses");
  ab_jctx_init (&c, "config.json", &err);
  ok (ab_jget_u64 (&c, j, "u", AB_OPTIONAL, UINT64_MAX, &u) < 0
          && strcmp (err.msg, "config.json: u: 18446744073709551616 is out of range (maximum 18446744073709551615)")
                 == 0,
      "uint64 overflow is refused: %s", err.msg);
  ok (ab_jget_u64 (&c, j, "i", AB_OPTIONAL, UINT64_MAX, &u) < 0 && strcmp (err.msg, "config.json: i: must not be negative (-1)") == 0,
      "negative for unsigned is refused: %s", err.msg);
  ok (ab_jget_i64 (&c, j, "f", AB_OPTIONAL, INT64_MIN, INT64_MAX, &i) < 0
          && strcmp (err.msg, "config.json: f: must be an integer, not 1.5") == 0,
      "fraction for integer is refused: %s", err.msg);
  ok (ab_jget_u64 (&c, j, "big", AB_OPTIONAL, UINT32_MAX, &u) < 0, "uint32 overflow is refused: %s", err.msg);
  ok (ab_jget_u64 (&c, j, "ok", AB_OPTIONAL, UINT32_MAX, &u) == 1 && u == 7, "in-range value is read");
  ok (ab_jget_u64 (&c, j, "s", AB_OPTIONAL, UINT32_MAX, &u) < 0
          && strcmp (err.msg, "config.json: s: must be an integer, not a string") == 0,
      "wrong type is named: %s", err.msg);
  ok (ab_jget_u64 (&c, j, "absent", AB_REQUIRED, UINT32_MAX, &u) < 0
          && strcmp (err.msg, "config.json: absent: required") == 0,
      "missing required member is named: %s", err.msg);
  ab_json_collect_unused (j, NULL, &unused);
  ok (unused.n == 0, "consumed members are not reported as unknown");
  ab_json_free (j);

  doc = "{\"process\":{\"cwd\":\"/\",\"extra\":{\"deep\":1}},\"zz\":[1]}";
  j = ab_json_parse (doc, strlen (doc), &ab_json_config_limits, "config.json", &err);
  {
    struct ab_json *p;
    size_t mark;
    char *cwd = NULL;
    ok (ab_jenter (&c, j, "process", AB_J_OBJECT, AB_REQUIRED, &p, &mark) == 1, "enter object");
    ok (ab_jget_str (&c, p, "cwd", AB_REQUIRED, &cwd) == 1 && strcmp (cwd, "/") == 0, "read string");
    ab_jpop (&c, mark);
    free (cwd);
  }
  ab_json_collect_unused (j, NULL, &unused);
  ok (unused.n == 2 && strcmp (unused.v[0], "process.extra") == 0 && strcmp (unused.v[1], "zz") == 0,
      "unknown properties are listed by path (%zu)", unused.n);
  ab_strv_free (&unused);
  ab_json_free (j);
}

/* The context path (the JSON path errors name) is built without snprintf:
   compare it with snprintf's own output, cut where the 1024-byte buffer
   ends, over a sequence of keys and indexes that fills it. */
static void
test_path_like_snprintf (void)
{
  char ref[sizeof ((struct ab_jctx *)0)->path];
  size_t rlen = 0, i, marks = 0, same = 0, steps = 0, cut = 0;
  struct ab_jctx c;
  ab_error_t err = { 0 };
  char key[200];

  ab_jctx_init (&c, "config.json", &err);
  ref[0] = '\0';
  for (i = 0; i < 400; i++)
    {
      int w;

      if (i % 3 == 2)
        {
          size_t idx = i * 7919u % 100003u;
          ab_jpush_index (&c, idx);
          w = snprintf (ref + rlen, sizeof ref - rlen, "[%zu]", idx);
        }
      else
        {
          size_t n = 1 + i * 37 % (sizeof key - 1);
          memset (key, 'a' + (int)(i % 26), n);
          key[n] = '\0';
          ab_jpush_key (&c, key);
          w = snprintf (ref + rlen, sizeof ref - rlen, "%s%s", rlen ? "." : "", key);
        }
      if (w > 0)
        rlen = rlen + (size_t)w < sizeof ref ? rlen + (size_t)w : sizeof ref - 1;
      steps++;
      cut += rlen == sizeof ref - 1;
      same += c.len == rlen && strcmp (c.path, ref) == 0;
      if (i % 23 == 22 && rlen > 10)
        {
          /* pop back to an earlier mark now and then */
          size_t mark = rlen / 2;
          ab_jpop (&c, mark);
          ref[mark] = '\0';
          rlen = mark;
          marks++;
        }
    }
  ok (same == steps && marks > 0 && cut > 0,
      "the context path is byte for byte snprintf's, also when cut at 1023 bytes (%zu of %zu steps, %zu cut)",
      same, steps, cut);
}

/* The text of j, compact. */
static char *
text_of (const struct ab_json *j)
{
  struct ab_gen *g = ab_gen_new (false);
  size_t len;
  char *t;

  ab_gen_json (g, j);
  t = ab_gen_steal (g, false, &len);
  ab_gen_free (g);
  return t;
}

/* A parsed document's nodes go with its root (one arena): a part kept
   beyond it is a copy, whole, and a copy can still be added to. */
static void
test_copy_outlives_document (void)
{
  static const char doc[] = "{\"x\":1,\"cgroup\":{\"paths\":[\"/a\",\"/b\",{\"c\":\"d\"}],\"v2\":true,"
                            "\"n\":null,\"w\":-12.5e3,\"e\":{},\"ea\":[]}}";
  ab_error_t err = { 0 };
  struct ab_json *j = ab_json_parse (doc, strlen (doc), &ab_json_config_limits, "state", &err);
  struct ab_json *cg = j ? ab_json_copy (ab_json_member (j, "cgroup")) : NULL;
  char *before = cg ? text_of (cg) : NULL, *after, *added;

  ab_json_free (j);
  after = cg ? text_of (cg) : NULL;
  is_str (after, "{\"paths\":[\"/a\",\"/b\",{\"c\":\"d\"}],\"v2\":true,\"n\":null,\"w\":-12.5e3,\"e\":{},\"ea\":[]}",
          "a copied part of a document reads the same after the document is freed");
  ok (before && after && strcmp (before, after) == 0, "... as it read before");
  for (int i = 0; cg && i < 9; i++)
    {
      char k[8];
      snprintf (k, sizeof k, "k%d", i);
      ab_json_set (cg, k, ab_json_new_str (k));
    }
  added = cg ? text_of (cg) : NULL;
  ok (added && strstr (added, "\"k8\":\"k8\"}") != NULL && strstr (added, "\"ea\":[],\"k0\":\"k0\"") != NULL,
      "... and can have members added past its first capacity");
  ab_json_free (cg);
  free (before);
  free (after);
  free (added);
}

int
main (void)
{
  test_duplicates ();
  test_utf8_and_nul ();
  test_limits ();
  test_syntax ();
  test_typed ();
  test_path_like_snprintf ();
  test_copy_outlives_document ();
  return tap_done ();
}
