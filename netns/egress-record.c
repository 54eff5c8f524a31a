/* The decision record: every DNS answer and proxy decision, in order, with
 * the rule that decided; bounded (a hostile container could otherwise grow
 * the supervisor's memory with queries), the overflow counted. */
#include "config.h"

#include <sys/socket.h>

#include "netns/egress-internal.h"

void
ab_egress_record_init (struct ab_egress_record *r, size_t max)
{
  memset (r, 0, sizeof *r);
  pthread_mutex_init (&r->lock, NULL);
  r->max = max;
}

void
ab_egress_decisions_free (struct ab_egress_decision *d, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (d[i].name);
      free (d[i].rule);
    }
  free (d);
}

void
ab_egress_record_destroy (struct ab_egress_record *r)
{
  ab_egress_decisions_free (r->v, r->n);
  pthread_mutex_destroy (&r->lock);
  memset (r, 0, sizeof *r);
}

void
ab_egress_record_add (struct ab_egress_record *r, int proto, const char *protocol, const char *name,
                      const struct ab_egress_addr *addr, uint16_t port, bool allowed, const char *rule)
{
  struct ab_egress_decision d = { 0 };

  d.time_ns = ab_now_realtime_ns ();
  d.proto = proto;
  snprintf (d.protocol, sizeof d.protocol, "%s", protocol);
  d.port = port;
  d.allowed = allowed;
  if (addr != NULL && addr->family != 0)
    ab_egress_addr_format (addr, d.address, sizeof d.address);

  pthread_mutex_lock (&r->lock);
  if (r->n >= r->max)
    {
      r->dropped++;
      pthread_mutex_unlock (&r->lock);
      return;
    }
  if (r->n == r->cap)
    {
      r->cap = r->cap ? r->cap * 2 : 64;
      r->v = xreallocarray (r->v, r->cap, sizeof *r->v);
    }
  d.name = xstrdup (name ? name : "");
  d.rule = xstrdup (rule);
  r->v[r->n++] = d;
  pthread_mutex_unlock (&r->lock);
}

size_t
ab_egress_decisions (struct ab_egress *e, struct ab_egress_decision **out, uint64_t *dropped)
{
  struct ab_egress_record *r = &e->record;
  struct ab_egress_decision *v;
  size_t n;

  pthread_mutex_lock (&r->lock);
  n = r->n;
  v = xcalloc (n, sizeof *v);
  for (size_t i = 0; i < n; i++)
    {
      v[i] = r->v[i];
      v[i].name = xstrdup (r->v[i].name);
      v[i].rule = xstrdup (r->v[i].rule);
    }
  if (dropped)
    *dropped = r->dropped;
  pthread_mutex_unlock (&r->lock);
  *out = v;
  return n;
}

static void
ab_egress_decision_array_gen (const struct ab_egress_decision *d, size_t n, struct ab_gen *g)
{
  char ts[64];

  ab_gen_arr_open (g);
  for (size_t i = 0; i < n; i++)
    {
      ab_format_time_rfc3339 (d[i].time_ns, ts, sizeof ts);
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "time", ts);
      ab_gen_key (g, "name");
      ab_gen_bytes (g, d[i].name, strlen (d[i].name));
      ab_gen_kv_str (g, "address", d[i].address);
      ab_gen_kv_u64 (g, "port", d[i].port);
      ab_gen_kv_str (g, "protocol", d[i].protocol);
      ab_gen_kv_bool (g, "allowed", d[i].allowed);
      ab_gen_kv_str (g, "rule", d[i].rule);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
}

void
ab_egress_decisions_gen (struct ab_egress *e, struct ab_gen *g)
{
  struct ab_egress_decision *d;
  size_t n = ab_egress_decisions (e, &d, NULL);

  ab_egress_decision_array_gen (d, n, g);
  ab_egress_decisions_free (d, n);
}
