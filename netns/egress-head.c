/* The first bytes of a proxy connection: the request head of an HTTP_PROXY
 * client, the ClientHello or Host of a redirected connection, the first
 * bytes inside a CONNECT tunnel.  Each reads what it can into the
 * connection and says what comes next -- wait for more, decide on the
 * name, refuse, relay -- which its caller (egress-proxy.c, egress-relay.c)
 * does: this file calls neither. */
#include "config.h"

#include "netns/egress-internal.h"

static int
head_refuse (struct ab_egress_head_verdict *v, int status, const char *rule, const struct ab_egress_addr *addr)
{
  v->status = status;
  v->rule = rule;
  v->addr = addr;
  return AB_HEAD_REFUSE;
}

/* The head h is a request the relay frames (ab_egress_relay_request);
   keep: keep-alive, the relay reads the later requests too. */
static int
head_frame (struct ab_egress_head_verdict *v, const struct ab_http_head *h, bool keep, int next)
{
  v->frame = true;
  v->keep = keep;
  v->h = *h;
  return next;
}

/* ---- heads ------------------------------------------------------------ */

static bool
looks_like_http (const uint8_t *p, size_t n)
{
  static const char *const methods[]
      = { "GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "PATCH ", "TRACE ", "CONNECT " };
  for (size_t i = 0; i < AB_ARRAY_SIZE (methods); i++)
    {
      size_t l = strlen (methods[i]);
      if (memcmp (p, methods[i], n < l ? n : l) == 0)
        return true;
    }
  return false;
}

/* A request to the proxy itself (HTTP_PROXY clients). */
int
ab_egress_head_explicit (struct ab_egress_conn *c, struct ab_egress_head_verdict *v)
{
  struct ab_http_head h;
  const char *why;
  int r = ab_http_parse_head ((const char *)c->head.d, c->head.len, &h, &why);

  if (r == AB_HTTP_MORE)
    {
      return AB_HEAD_MORE;
    }
  ab_egress_conn_set_protocol (c, AB_EGRESS_P_HTTP, r == AB_HTTP_OK ? h.method : "http");
  if (r == AB_HTTP_TOO_BIG)
    {
      return head_refuse (v, 431, "http-too-big", NULL);
    }
  if (r == AB_HTTP_BAD)
    {
      return head_refuse (v, 400, "http-malformed", NULL);
    }
  snprintf (c->name, sizeof c->name, "%s", h.host);
  c->port = h.port;
  c->forward_from = h.head_len;
  if (h.form == AB_HTTP_AUTHORITY)
    {
      ab_egress_conn_set_protocol (c, AB_EGRESS_P_CONNECT, "CONNECT");
      return AB_HEAD_DECIDE;
    }
  if (h.https_scheme)
    {
      return head_refuse (v, 400, "https-uri-needs-connect", NULL);
    }
  if (h.form != AB_HTTP_ABSOLUTE)
    {
      return head_refuse (v, 400, "not-a-proxy-request", NULL);
    }
  /* The decision is on the URI's host; a Host header naming another one
     would have a virtual-hosting upstream serve the other site. */
  if (h.has_host && (strcmp (h.host_hdr, h.host) != 0 || (h.host_hdr_port ? h.host_hdr_port : 80) != h.port))
    {
      return head_refuse (v, 403, "host-mismatch", NULL);
    }
  c->rewritten = ab_http_rewrite_origin ((const char *)c->head.d, &h, &c->rewritten_len);
  /* One request: the rewrite asked the upstream to close after it, and
     the next one could name another host. */
  return head_frame (v, &h, false, AB_HEAD_DECIDE);
}

/* A redirected connection: the name comes from the ClientHello or Host. */
int
ab_egress_head_transparent (struct ab_egress_conn *c, struct ab_egress_head_verdict *v)
{
  char sni[AB_EGRESS_NAME_MAX + 1];
  struct ab_http_head h;
  const char *why;
  int r;

  c->port = c->oport;
  if (c->head.d[0] == 0x16)
    {
      c->tls = true;
      ab_egress_conn_set_protocol (c, AB_EGRESS_P_TLS_SNI, "tls-sni");
      r = ab_tls_client_hello_sni (c->head.d, c->head.len, sni);
      if (r == AB_TLS_MORE && c->head.len < HEAD_MAX)
        {
          return AB_HEAD_MORE;
        }
      if (r != AB_TLS_HELLO)
        {
          return head_refuse (v, 403, "tls-malformed", &c->odst);
        }
      if (sni[0] == '\0')
        {
          return head_refuse (v, 403, "no-sni", &c->odst);
        }
      snprintf (c->name, sizeof c->name, "%s", sni);
      return AB_HEAD_DECIDE;
    }
  ab_egress_conn_set_protocol (c, AB_EGRESS_P_HTTP_HOST, "http-host");
  if (!looks_like_http (c->head.d, c->head.len))
    {
      return head_refuse (v, 403, "unknown-protocol", &c->odst);
    }
  r = ab_http_parse_head ((const char *)c->head.d, c->head.len, &h, &why);
  if (r == AB_HTTP_MORE)
    {
      return AB_HEAD_MORE;
    }
  if (r != AB_HTTP_OK)
    {
      return head_refuse (v, r == AB_HTTP_TOO_BIG ? 431 : 400, "http-malformed", &c->odst);
    }
  if (!h.has_host)
    {
      return head_refuse (v, 400, "no-host", &c->odst);
    }
  if (h.form == AB_HTTP_ABSOLUTE && strcmp (h.host, h.host_hdr) != 0)
    {
      return head_refuse (v, 403, "host-mismatch", &c->odst);
    }
  if (h.form == AB_HTTP_AUTHORITY)
    {
      return head_refuse (v, 400, "http-malformed", &c->odst);
    }
  snprintf (c->name, sizeof c->name, "%s", h.host_hdr);
  /* Sent as it is, keep-alive included: the relay checks every later
     request's Host against this decision. */
  c->forward_from = h.head_len;
  return head_frame (v, &h, true, AB_HEAD_DECIDE);
}

/* Inside a CONNECT tunnel: the first client bytes must not name another
   host than the CONNECT did (domain fronting, a ClientHello for a listed
   name smuggled to an unlisted one is handled by the CONNECT decision). */
int
ab_egress_head_tunnel (struct ab_egress *e, struct ab_egress_conn *c, struct ab_egress_head_verdict *v)
{
  char sni[AB_EGRESS_NAME_MAX + 1], proto[24];
  struct ab_http_head h;
  const char *why, *name = NULL, *bad = NULL;
  bool http = false;
  int r;

  snprintf (proto, sizeof proto, "%s", c->protocol);
  if (c->head.d[0] == 0x16)
    {
      r = ab_tls_client_hello_sni (c->head.d, c->head.len, sni);
      if (r == AB_TLS_MORE && c->head.len < HEAD_MAX)
        goto more;
      if (r != AB_TLS_HELLO)
        bad = "tls-malformed";
      else if (sni[0] != '\0' && !c->literal && strcmp (sni, c->name) != 0)
        bad = "sni-mismatch", name = sni;
      snprintf (proto, sizeof proto, "tls-sni");
    }
  else if (looks_like_http (c->head.d, c->head.len))
    {
      r = ab_http_parse_head ((const char *)c->head.d, c->head.len, &h, &why);
      if (r == AB_HTTP_MORE)
        goto more;
      if (r != AB_HTTP_OK)
        bad = "http-malformed";
      else if (h.has_host && !c->literal && strcmp (h.host_hdr, c->name) != 0)
        bad = "host-mismatch", name = h.host_hdr;
      http = true;
      snprintf (proto, sizeof proto, "http-host");
    }
  if (bad != NULL)
    {
      ab_egress_record_add (&e->record, c->proto, proto, name ? name : c->name, &c->cand[c->i_cand - 1],
                            c->port, false, bad);
      c->tls = c->head.d[0] == 0x16;
      return head_refuse (v, 403, NULL, NULL);
    }
  /* HTTP in the tunnel is read request by request like any plain HTTP;
     TLS and other protocols pass as they come (the CONNECT decision is for
     the stream). */
  if (http)
    return head_frame (v, &h, true, AB_HEAD_RELAY);
  c->fr = AB_FR_BLIND;
  return AB_HEAD_RELAY;

more:
  if (c->deadline == 0)
    c->deadline = ab_egress_now_ms () + e->opt.head_timeout_ms;
  return AB_HEAD_MORE;
}
