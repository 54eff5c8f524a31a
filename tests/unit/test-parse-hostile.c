/* Hostile input: every class of malformed or oversized config.json is
   refused with one line naming where, and nothing crashes, leaks or takes
   quadratic time. */
#include "config.h"

#include "base/json.h"
#include "tests/unit/test-parse-util.h"

/* A document with `n` copies of `item` (comma-separated) between head and
   tail: for huge arrays and objects.  "%d" in item becomes the index. */
static char *
repeat (const char *head, const char *item, size_t n, const char *tail)
{
  const char *mark = strstr (item, "%d");
  size_t cap = strlen (head) + strlen (tail) + n * (strlen (item) + 24) + 1;
  char *buf = xmalloc (cap), *p = buf;
  size_t i;

  p = stpcpy (p, head);
  for (i = 0; i < n; i++)
    {
      if (i)
        *p++ = ',';
      if (mark == NULL)
        p = stpcpy (p, item);
      else
        {
          memcpy (p, item, (size_t)(mark - item));
          p += mark - item;
          p += sprintf (p, "%zu", i);
          p = stpcpy (p, mark + 2);
        }
    }
  strcpy (p, tail);
  return buf;
}

/* A document whose process.cwd is "/" and n times 'a'. */
static char *
long_cwd (size_t n)
{
  static const char head[]
      = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/";
  char *d = xmalloc (sizeof head + n + 4);

  memcpy (d, head, sizeof head - 1);
  memset (d + sizeof head - 1, 'a', n);
  strcpy (d + sizeof head - 1 + n, "\"}}");
  return d;
}

/* head, then open n times, then close n times, then tail. */
static char *
nest (const char *head, const char *open, size_t n, const char *close, const char *tail)
{
  size_t lo = strlen (open), lc = strlen (close), lh = strlen (head), i;
  char *d = xmalloc (lh + n * (lo + lc) + strlen (tail) + 1), *p = d;

  p = stpcpy (p, head);
  for (i = 0; i < n; i++)
    p = stpcpy (p, open);
  for (i = 0; i < n; i++)
    p = stpcpy (p, close);
  strcpy (p, tail);
  return d;
}

static void
test_size_limits (void)
{
  size_t max = AB_CONFIG_MAX_BYTES;
  char *big;
  const char *base = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"}}";

  big = xmalloc (max + 2);
  memset (big, ' ', max + 1);
  memcpy (big, base, strlen (base));
  big[max + 1] = '\0';
  is_str (perr_len (big, max + 1), "config.json: larger than 4194304 bytes",
          "a document of 4 MiB + 1 is refused");
  big = xmalloc (max + 1);
  memset (big, ' ', max);
  memcpy (big, base, strlen (base));
  big[max] = '\0';
  ok (perr_len (big, max) == NULL, "a valid document of exactly 4 MiB (padded) parses");

  is_str (perr (long_cwd (200u << 10)), "config.json: process.cwd: string longer than 131072 bytes",
          "a 200 KiB string is refused");
  is_str (perr (long_cwd (5000)), "config.json: process.cwd: path longer than 4095 bytes",
          "a path longer than PATH_MAX is refused before any syscall sees it");

  big = xmalloc ((200u << 10) + 64);
  strcpy (big, "{\"");
  memset (big + 2, 'k', 200u << 10);
  strcpy (big + 2 + (200u << 10), "\":1}");
  is_str (perr (big), "config.json: key longer than 131072 bytes", "a 200 KiB key is refused");
}

static void
test_nesting (void)
{
  static const char head[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"x\":";
  const char *e;

  e = perr (nest (head, "[", 70, "]", "}"));
  ok (e != NULL && ab_str_has_prefix (e, "config.json: x")
          && strstr (e, ": nesting deeper than 64 levels") != NULL,
      "arrays nested 70 deep are refused: %s", e ? e : "(accepted)");
  e = perr (nest ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"annotations\":", "{\"a\":", 100, "}",
                  "1}"));
  ok (e != NULL && strstr (e, "nesting deeper than 64 levels") != NULL,
      "objects nested 100 deep are refused: %s", e ? e : "(accepted)");
  e = perr (nest (head, "[", 60, "]", "}"));
  ok (e == NULL, "60 levels of nesting in an unknown member are accepted (and ignored): %s",
      e ? e : "parsed");
  e = perr (
      nest ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":", "[", 1000000, "]", "}"));
  ok (e != NULL && strstr (e, "nesting deeper than 64 levels") != NULL,
      "a million open brackets stop at depth 64, without recursion: %s", e ? e : "(accepted)");
}

static void
test_huge_collections (void)
{
  struct ab_spec *s;
  const char *e;

  e = perr (repeat (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
      "\"env\":[",
      "\"A=1\"", 65537, "]}}"));
  ok (e != NULL && ab_str_has_prefix (e, "config.json: process.env")
          && strstr (e, "more than 65536 elements"),
      "an array of 65537 elements is refused: %s", e ? e : "(accepted)");
  e = perr (repeat ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"annotations\":{", "\"k%d\":\"v\"",
                    65537, "}}"));
  ok (e != NULL && ab_str_has_prefix (e, "config.json: annotations") && strstr (e, "more than 65536 members"),
      "an object of 65537 members is refused: %s", e ? e : "(accepted)");
  e = perr (repeat (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"x\":[",
      "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
      "0,"
      "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]",
      10600, "]}"));
  ok (e != NULL && strstr (e, "more than 1048576 values in the document"),
      "a document of more than 2^20 values is refused: %s", e ? e : "(accepted)");

  s = parse_ok (repeat ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"mounts\":[",
                        "{\"destination\":\"/m%d\",\"options\":[\"ro\",\"size=1\"]}", 65536, "]}"));
  ok (s != NULL && s->n_mounts == 65536 && strcmp (s->mounts[65535].destination, "/m65535") == 0
          && strcmp (s->mounts[65535].data, "size=1") == 0,
      "65536 mounts, the most an array may hold, parse");
  ab_spec_free (s);
  s = parse_ok (repeat ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"linux\":{\"seccomp\":{"
                        "\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[",
                        "{\"names\":[\"s%d\"],\"action\":\"SCMP_ACT_ALLOW\"}", 65536, "]}}}"));
  ok (s != NULL && s->linux_->seccomp->n_syscalls == 65536, "a seccomp profile of 65536 rules parses");
  ab_spec_free (s);
  /* Quadratic work would take minutes here: 65536 names parse in linear time. */
  s = parse_ok (repeat (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
      "\"capabilities\":{\"bounding\":[",
      "\"CAP_KILL\",\"CAP_CHOWN\"", 32768, "]}}}"));
  ok (s != NULL && s->process->caps.mask[AB_CAP_BOUNDING] == ((UINT64_C (1) << 5) | 1) && s->warnings.n == 0,
      "65536 capability names parse into one mask");
  ab_spec_free (s);
  e = perr (repeat (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
      "\"capabilities\":{\"bounding\":[",
      "\"CAP_KILL\",\"CAP_X%d\"", 32768, "]}}}"));
  is_str (e, "config.json: process.capabilities.bounding[1]: unknown capability \"CAP_X0\"",
          "65536 names with unknown ones: the first unknown one is refused");
  e = perr (repeat (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
      "\"rlimits\":[",
      "{\"type\":\"RLIMIT_NOFILE\",\"soft\":1,\"hard\":1}", 65536, "]}}"));
  is_str (e, "config.json: process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"",
          "65536 identical rlimits stop at the first duplicate");
}

static void
test_duplicate_keys (void)
{
  is_str (perr (dq ("{'ociVersion':'1.3.0','ociVersion':'1.0.0','root':{'path':'r'}}")),
          "config.json: duplicate key \"ociVersion\"", "a duplicate top-level key is refused");
  is_str (perr (proc ("'user':{'uid':0,'gid':0,'uid':1000}")),
          "config.json: process.user: duplicate key \"uid\"",
          "a duplicate key two levels down is refused with its object's path");
  is_str (perr (lnx ("'resources':{'memory':{'limit':1,'swap':2,'limit':3}}")),
          "config.json: linux.resources.memory: duplicate key \"limit\"",
          "a duplicate key three levels down");
  is_str (
      perr (lnx (
          "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_ALLOW'},"
          "{'names':['b'],'action':'SCMP_ACT_ERRNO','args':[{'index':0,'value':1,'op':'SCMP_CMP_EQ',"
          "'op':'SCMP_CMP_NE'}]}]}")),
      "config.json: linux.seccomp.syscalls[1].args[0]: duplicate key \"op\"",
      "a duplicate key inside nested arrays names the element");
  is_str (perr (doc ("'annotations':{'a':'1','b':'2','a':'3'}")),
          "config.json: annotations: duplicate key \"a\"", "a duplicate annotation is refused");
  is_str (perr (doc ("'x-unknown':{'k':1,'k':2}")), "config.json: x-unknown: duplicate key \"k\"",
          "a duplicate key in an unknown member is refused too");
}

static void
test_utf8_and_nul (void)
{
  is_str (perr (doc ("'hostname':'a\xff'")), "config.json: hostname: string is not valid UTF-8",
          "an invalid UTF-8 byte is refused, naming the field");
  is_str (perr (doc ("'mounts':[{'destination':'/a\xc0\xaf..\xc0\xaf"
                     "etc'}]")),
          "config.json: mounts[0].destination: string is not valid UTF-8",
          "an overlong '/' (the classic traversal trick) is refused");
  is_str (perr (doc ("'hostname':'\xed\xa0\x80'")), "config.json: hostname: string is not valid UTF-8",
          "a UTF-8 encoded surrogate is refused");
  is_str (perr (doc ("'annotations':{'k\xfe':'v'}")), "config.json: annotations: key is not valid UTF-8",
          "an invalid UTF-8 key is refused, naming its object");
  is_str (perr (doc ("'annotations':{'a':'1','k\xfe':'v'}")), "config.json: annotations: key is not valid UTF-8",
          "... its object, not the member before it");
  is_str (perr (doc ("'hostname':'\xe2\x82'")), "config.json: hostname: string is not valid UTF-8",
          "a multibyte sequence cut short at the string's end is refused");
  {
    struct ab_spec *s = parse_ok (doc ("'hostname':'a\\ud800b'"));
    ok (s != NULL && ab_utf8_valid (s->hostname, strlen (s->hostname)),
        "a lone escaped surrogate never yields invalid UTF-8 (the reader replaces it)");
    ab_spec_free (s);
  }
  is_str (perr (proc ("'env':['A=\\u0000']")), "config.json: process.env[0]: string contains a NUL byte",
          "an escaped NUL in env is refused");
  is_str (
      perr (dq ("{'ociVersion':'1.3.0','root':{'path':'r'},'process':{'cwd':'/a\\u0000/b','args':['sh']}}")),
      "config.json: process.cwd: string contains a NUL byte", "a NUL in process.cwd is refused");
  is_str (perr (doc ("'mounts':[{'destination':'/etc\\u0000/x'}]")),
          "config.json: mounts[0].destination: string contains a NUL byte",
          "a NUL in a mount destination is refused");
  is_str (perr (doc ("'hooks':{'prestart':[{'path':'/bin/true\\u0000.sh'}]}")),
          "config.json: hooks.prestart[0].path: string contains a NUL byte",
          "a NUL in a hook path is refused");
  is_str (perr (lnx ("'maskedPaths':['/proc/kcore\\u0000']")),
          "config.json: linux.maskedPaths[0]: string contains a NUL byte",
          "a NUL in a masked path is refused");
  is_str (perr (lnx ("'namespaces':[{'type':'net\\u0000work'}]")),
          "config.json: linux.namespaces[0].type: string contains a NUL byte",
          "a NUL cannot truncate an enumeration name into a valid one");
  {
    static const char raw[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\0\"}}";
    const char *e = perr_len (xstrndup (raw, sizeof raw - 1), sizeof raw - 1);
    ok (e != NULL && ab_str_has_prefix (e, "config.json: invalid JSON near byte"),
        "a raw NUL byte is invalid JSON: %s", e ? e : "(accepted)");
  }
  {
    static const char raw[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"}}\0{\"x\":1}";
    const char *e = perr_len (xstrndup (raw, sizeof raw - 1), sizeof raw - 1);
    ok (e != NULL && ab_str_has_prefix (e, "config.json: invalid JSON"),
        "a second document after a NUL is refused, not ignored: %s", e ? e : "(accepted)");
  }
  ok (perr (dq ("")) != NULL, "an empty file is refused");
}

static void
test_terminal_injection (void)
{
  struct ab_spec *s;
  const char *e;

  e = perr (dq ("{'ociVersion':'1.3.0','root':{'path':'r'},'x\\u001b[2J\\n':1,'x\\u001b[2J\\n':2}"));
  is_str (e, "config.json: duplicate key \"x\\u001b[2J\\n\"",
          "a duplicate key's escape sequence and newline are escaped in the reader's message");
  e = perr (proc ("'x\\u001b]0;owned\\u0007':{'a':'\\u0000'}"));
  is_str (e, "config.json: process.x\\u001b]0;owned\\u0007.a: string contains a NUL byte",
          "a key on the reader's path is escaped too (no terminal title change)");
  e = perr (lnx ("'namespaces':[{'type':'\\u202enet'}]"));
  is_str (e, "config.json: linux.namespaces[0].type: unknown namespace \"\\u202enet\"",
          "a right-to-left override in a value is escaped (Trojan Source)");
  e = perr (lnx ("'namespaces':[{'type':'\xc2\x9b"
                 "31m'}]"));
  is_str (e, "config.json: linux.namespaces[0].type: unknown namespace \"\\u009b31m\"",
          "a C1 control (8-bit CSI) is escaped");
  s = parse_ok (doc ("'x\\u001b[31m':1,'process':{'cwd':'/','args':['sh'],'y\\r':2}"));
  ok (s && s->unknown.n == 2 && strcmp (s->unknown.v[0], "\"x\\u001b[31m\"") == 0
          && strcmp (s->unknown.v[1], "\"process.y\\u000d\"") == 0,
      "unknown properties with control characters are listed quoted and escaped");
  ab_spec_free (s);
  e = perr (lnx ("'namespaces':[{'type':'"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaa"
                 "'}]"));
  ok (e && ab_str_has_suffix (e, "aaa\"...") && strlen (e) < 300, "a long value is cut in the message: %s",
      e ? e : "(accepted)");
}

static void
test_numbers (void)
{
  /* One overflow per schema type. */
  is_str (perr (lnx ("'resources':{'blockIO':{'weight':65536}}")),
          "config.json: linux.resources.blockIO.weight: 65536 is out of range (maximum 65535)",
          "uint16 overflow");
  is_str (perr (proc ("'user':{'uid':4294967296,'gid':0}")),
          "config.json: process.user.uid: 4294967296 is out of range (maximum 4294967295)",
          "uint32 overflow");
  is_str (perr (proc ("'scheduler':{'policy':'SCHED_OTHER','nice':-2147483649}")),
          "config.json: process.scheduler.nice: -2147483649 is out of range (-2147483648 to 2147483647)",
          "int32 underflow");
  is_str (perr (lnx ("'timeOffsets':{'boottime':{'secs':9223372036854775808}}")),
          "config.json: linux.timeOffsets.boottime.secs: 9223372036854775808 is out of range "
          "(-9223372036854775808 to "
          "9223372036854775807)",
          "int64 overflow");
  is_str (perr (lnx ("'timeOffsets':{'boottime':{'secs':-9223372036854775809}}")),
          "config.json: linux.timeOffsets.boottime.secs: -9223372036854775809 is out of range "
          "(-9223372036854775808 to "
          "9223372036854775807)",
          "int64 underflow");
  ok (perr (lnx ("'timeOffsets':{'boottime':{'secs':-9223372036854775808}}")) == NULL,
      "INT64_MIN itself is accepted");
  is_str (perr (proc ("'rlimits':[{'type':'RLIMIT_CORE','soft':18446744073709551616,'hard':1}]")),
          "config.json: process.rlimits[0].soft: 18446744073709551616 is out of range (maximum "
          "18446744073709551615)",
          "uint64 overflow");
  is_str (perr (proc ("'rlimits':[{'type':'RLIMIT_CORE','soft':99999999999999999999999999999,'hard':1}]")),
          "config.json: process.rlimits[0].soft: 99999999999999999999999999999 is out of range (maximum "
          "18446744073709551615)",
          "a 29-digit number is out of range, not wrapped");
  is_str (perr (proc ("'oomScoreAdj':100000000000000000000000000000000000000000000000000000000000000000")),
          "config.json: process.oomScoreAdj: number literal longer than 64 characters",
          "a number literal longer than 64 characters is refused by the reader");
  /* Negative where unsigned. */
  is_str (perr (proc ("'user':{'uid':-1,'gid':0}")),
          "config.json: process.user.uid: must not be negative (-1)",
          "uid -1 (the classic \"nobody\" overflow) is refused");
  is_str (perr (proc ("'rlimits':[{'type':'RLIMIT_CORE','soft':0,'hard':-1}]")),
          "config.json: process.rlimits[0].hard: must not be negative (-1)", "an rlimit of -1 is refused");
  is_str (
      perr (lnx (
          "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['a'],'action':'SCMP_ACT_ALLOW',"
          "'args':[{'index':0,'value':-1,'op':'SCMP_CMP_EQ'}]}]}")),
      "config.json: linux.seccomp.syscalls[0].args[0].value: must not be negative (-1)",
      "a negative seccomp argument value is refused");
  is_str (perr (proc ("'user':{'uid':-0,'gid':0}")),
          "config.json: process.user.uid: must not be negative (-0)", "-0 is not an unsigned integer either");
  /* Floats and exponents where integers. */
  is_str (perr (proc ("'user':{'uid':0.0,'gid':0}")),
          "config.json: process.user.uid: must be an integer, not 0.0", "0.0 is not an integer");
  is_str (perr (proc ("'user':{'uid':0,'gid':1.5}")),
          "config.json: process.user.gid: must be an integer, not 1.5", "1.5 is not an integer");
  is_str (perr (lnx ("'resources':{'memory':{'limit':1e9}}")),
          "config.json: linux.resources.memory.limit: must be an integer, not 1e9", "1e9 is not an integer");
  is_str (perr (lnx ("'resources':{'pids':{'limit':-0.5}}")),
          "config.json: linux.resources.pids.limit: must be an integer, not -0.5", "-0.5 is not an integer");
  is_str (perr (proc ("'rlimits':[{'type':'RLIMIT_CORE','soft':1E400,'hard':1}]")),
          "config.json: process.rlimits[0].soft: must be an integer, not 1E400", "1E400 is not an integer");
  ok (perr (proc ("'user':{'uid':01,'gid':0}")) != NULL, "a leading zero is invalid JSON");
  ok (perr (proc ("'user':{'uid':0x10,'gid':0}")) != NULL, "hexadecimal is invalid JSON");
  ok (perr (proc ("'user':{'uid':+1,'gid':0}")) != NULL, "a plus sign is invalid JSON");
  ok (perr (proc ("'user':{'uid':NaN,'gid':0}")) != NULL, "NaN is invalid JSON");
}

static void
test_paths (void)
{
  static const char *const bad[]
      = { "/..", "/a/..", "//..//x", "/proc/self/../../etc", "../x", "x/../y", "/a/.", "./a", "" };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *m = xasprintf ("'maskedPaths':['%s']", bad[i]);
      const char *e = perr (lnx (m));
      ok (e != NULL && ab_str_has_prefix (e, "config.json: linux.maskedPaths[0]: must "),
          "masked path \"%s\" is refused", bad[i]);
    }
  ok (perr (lnx ("'maskedPaths':['/...','/a..b','/..a','//proc//kcore']")) == NULL,
      "names that merely contain dots, and doubled slashes, are accepted");
  for (i = 0; i < AB_ARRAY_SIZE (bad) - 1; i++)
    {
      _cleanup_free_ char *m = xasprintf ("'hooks':{'poststop':[{'path':'%s'}]}", bad[i]);
      const char *e = perr (doc (m));
      ok (e != NULL && ab_str_has_prefix (e, "config.json: hooks.poststop[0].path: must "),
          "hook path \"%s\" is refused", bad[i]);
    }
}

/* ---- wrong types everywhere ------------------------------------------- */

struct target
{
  struct ab_json *node;
  struct ab_json *parent;
  char path[512];
  char parent_path[512];
};

struct targets
{
  struct target *v;
  size_t n;
};

static void
collect_targets (struct ab_json *j, struct ab_json *parent, const char *path, const char *ppath,
                 struct targets *t)
{
  size_t i;

  if (parent != NULL)
    {
      struct target *x;
      t->v = xreallocarray (t->v, t->n + 1, sizeof *t->v);
      x = &t->v[t->n++];
      x->node = j;
      x->parent = parent;
      snprintf (x->path, sizeof x->path, "%s", path);
      snprintf (x->parent_path, sizeof x->parent_path, "%s", ppath);
    }
  if (j->type == AB_J_ARRAY)
    for (i = 0; i < j->u.arr.n; i++)
      {
        char p[512];
        snprintf (p, sizeof p, "%s[%zu]", path, i);
        collect_targets (j->u.arr.items[i], j, p, path, t);
      }
  else if (j->type == AB_J_OBJECT)
    for (i = 0; i < j->u.obj.n; i++)
      {
        char p[512];
        snprintf (p, sizeof p, "%s%s%s", path, path[0] ? "." : "", j->u.obj.m[i].key);
        collect_targets (j->u.obj.m[i].val, j, p, path, t);
      }
}

struct out
{
  char *s;
  size_t len, cap;
};

static void
put (struct out *o, const char *s, size_t n)
{
  if (o->len + n + 1 > o->cap)
    {
      o->cap = (o->len + n + 1) * 2;
      o->s = xrealloc (o->s, o->cap);
    }
  memcpy (o->s + o->len, s, n);
  o->len += n;
  o->s[o->len] = '\0';
}

static void
put_string (struct out *o, const char *s)
{
  put (o, "\"", 1);
  for (; *s; s++)
    {
      char esc[8];
      if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
        put (o, esc, (size_t)snprintf (esc, sizeof esc, "\\u%04x", (unsigned char)*s));
      else
        put (o, s, 1);
    }
  put (o, "\"", 1);
}

/* Serialise j, writing `replacement` in place of node `target`. */
static void
emit (struct out *o, const struct ab_json *j, const struct ab_json *target, const char *replacement)
{
  size_t i;

  if (j == target)
    {
      put (o, replacement, strlen (replacement));
      return;
    }
  switch (j->type)
    {
    case AB_J_NULL:
      put (o, "null", 4);
      break;
    case AB_J_BOOL:
      put (o, j->u.b ? "true" : "false", j->u.b ? 4 : 5);
      break;
    case AB_J_NUMBER:
      put (o, j->u.num, strlen (j->u.num));
      break;
    case AB_J_STRING:
      put_string (o, j->u.str.s);
      break;
    case AB_J_ARRAY:
      put (o, "[", 1);
      for (i = 0; i < j->u.arr.n; i++)
        {
          if (i)
            put (o, ",", 1);
          emit (o, j->u.arr.items[i], target, replacement);
        }
      put (o, "]", 1);
      break;
    case AB_J_OBJECT:
      put (o, "{", 1);
      for (i = 0; i < j->u.obj.n; i++)
        {
          if (i)
            put (o, ",", 1);
          put_string (o, j->u.obj.m[i].key);
          put (o, ":", 1);
          emit (o, j->u.obj.m[i].val, target, replacement);
        }
      put (o, "}", 1);
      break;
    }
}

static const char *
wrong_value (enum ab_jtype t)
{
  switch (t)
    {
    case AB_J_STRING:
      return "1";
    case AB_J_NUMBER:
    case AB_J_BOOL:
      return "\"1\"";
    case AB_J_ARRAY:
      return "{}";
    case AB_J_OBJECT:
      return "[]";
    default:
      return "0";
    }
}

static void
test_wrong_types_everywhere (void)
{
  ab_error_t err = { 0 };
  struct targets t = { 0 };
  size_t len, i, bad_type = 0, bad_null = 0, nulls_ok = 0;
  char *text = fixture ("maximal.json", &len);
  struct ab_json *root = ab_json_parse (text, len, &ab_json_config_limits, "config.json", &err);

  free (text);
  if (root == NULL)
    {
      ok (0, "maximal.json is JSON: %s", err.msg);
      return;
    }
  collect_targets (root, NULL, "", "", &t);
  for (i = 0; i < t.n; i++)
    {
      struct out o = { 0 };
      _cleanup_free_ char *want = xasprintf ("config.json: %s: must be ", t.v[i].path);
      const char *e;

      emit (&o, root, t.v[i].node, wrong_value (t.v[i].node->type));
      e = perr (o.s);
      if (e == NULL || !ab_str_has_prefix (e, want))
        {
          if (bad_type++ < 5)
            printf ("# %s given the wrong type: %s\n", t.v[i].path, e ? e : "accepted");
        }
      o = (struct out){ 0 };
      emit (&o, root, t.v[i].node, "null");
      e = perr (o.s);
      if (e == NULL)
        nulls_ok++;
      else
        {
          /* A null member is absent: a required one is reported at its
             path, a rule it took part in at its object's. */
          _cleanup_free_ char *at = xasprintf ("config.json: %s", t.v[i].parent_path);
          if (!ab_str_has_prefix (e, at) && bad_null++ < 5)
            printf ("# %s given null: %s\n", t.v[i].path, e);
        }
    }
  ok (t.n > 300 && bad_type == 0,
      "each of the %zu values of the maximal config, given the wrong type, is refused "
      "naming its path",
      t.n);
  ok (bad_null == 0 && nulls_ok > 0 && nulls_ok < t.n,
      "each value given null is either absent (%zu were optional) or refused within its object", nulls_ok);
  free (t.v);
  ab_json_free (root);
}

int
main (void)
{
  test_size_limits ();
  test_nesting ();
  test_huge_collections ();
  test_duplicate_keys ();
  test_utf8_and_nul ();
  test_terminal_injection ();
  test_numbers ();
  test_paths ();
  test_wrong_types_everywhere ();
  return tap_done ();
}
