/* The first bytes of a proxy connection: the request head of an HTTP_PROXY
 * client, the ClientHello or Host of a redirected connection, the first
 * bytes inside a CONNECT tunnel.  Each ends in a decision or a refusal. */
#include "config.h"

#include "netns/egress-internal.h"

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
void
ab_egress_head_explicit (struct ab_egress *e, struct ab_egress_conn *c)
{
  struct ab_http_head h;
  const char *why;
  int r = ab_http_parse_head ((const char *)c->head.d, c->head.len, &h, &why);

  if (r == AB_HTTP_MORE)
    {
      ab_egress_conn_update (e, c);
      return;
    }
  ab_egress_conn_set_protocol (c, AB_EGRESS_P_HTTP, r == AB_HTTP_OK ? h.method : "http");
  if (r == AB_HTTP_TOO_BIG)
    {
      ab_egress_conn_refuse (e, c, 431, "http-too-big", NULL);
      return;
    }
  if (r == AB_HTTP_BAD)
    {
      ab_egress_conn_refuse (e, c, 400, "http-malformed", NULL);
      return;
    }
  snprintf (c->name, sizeof c->name, "%s", h.host);
  c->port = h.port;
  c->forward_from = h.head_len;
  if (h.form == AB_HTTP_AUTHORITY)
    {
      ab_egress_conn_set_protocol (c, AB_EGRESS_P_CONNECT, "CONNECT");
      ab_egress_conn_decide (e, c);
      return;
    }
  if (h.https_scheme)
    {
      ab_egress_conn_refuse (e, c, 400, "https-uri-needs-connect", NULL);
      return;
    }
  if (h.form != AB_HTTP_ABSOLUTE)
    {
      ab_egress_conn_refuse (e, c, 400, "not-a-proxy-request", NULL);
      return;
    }
  /* The decision is on the URI's host; a Host header naming another one
     would have a virtual-hosting upstream serve the other site. */
  if (h.has_host && (strcmp (h.host_hdr, h.host) != 0 || (h.host_hdr_port ? h.host_hdr_port : 80) != h.port))
    {
      ab_egress_conn_refuse (e, c, 403, "host-mismatch", NULL);
      return;
    }
  c->rewritten = ab_http_rewrite_origin ((const char *)c->head.d, &h, &c->rewritten_len);
  /* One request: the rewrite asked the upstream to close after it, and
     the next one could name another host. */
  ab_egress_relay_request (c, &h, false);
  ab_egress_conn_decide (e, c);
}

/* A redirected connection: the name comes from the ClientHello or Host. */
void
ab_egress_head_transparent (struct ab_egress *e, struct ab_egress_conn *c)
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
          ab_egress_conn_update (e, c);
          return;
        }
      if (r != AB_TLS_HELLO)
        {
          ab_egress_conn_refuse (e, c, 403, "tls-malformed", &c->odst);
          return;
        }
      if (sni[0] == '\0')
        {
          ab_egress_conn_refuse (e, c, 403, "no-sni", &c->odst);
          return;
        }
      snprintf (c->name, sizeof c->name, "%s", sni);
      ab_egress_conn_decide (e, c);
      return;
    }
  ab_egress_conn_set_protocol (c, AB_EGRESS_P_HTTP_HOST, "http-host");
  if (!looks_like_http (c->head.d, c->head.len))
    {
      ab_egress_conn_refuse (e, c, 403, "unknown-protocol", &c->odst);
      return;
    }
  r = ab_http_parse_head ((const char *)c->head.d, c->head.len, &h, &why);
  if (r == AB_HTTP_MORE)
    {
      ab_egress_conn_update (e, c);
      return;
    }
  if (r != AB_HTTP_OK)
    {
      ab_egress_conn_refuse (e, c, r == AB_HTTP_TOO_BIG ? 431 : 400, "http-malformed", &c->odst);
      return;
    }
  if (!h.has_host)
    {
      ab_egress_conn_refuse (e, c, 400, "no-host", &c->odst);
      return;
    }
  if (h.form == AB_HTTP_ABSOLUTE && strcmp (h.host, h.host_hdr) != 0)
    {
      ab_egress_conn_refuse (e, c, 403, "host-mismatch", &c->odst);
      return;
    }
  if (h.form == AB_HTTP_AUTHORITY)
    {
      ab_egress_conn_refuse (e, c, 400, "http-malformed", &c->odst);
      return;
    }
  snprintf (c->name, sizeof c->name, "%s", h.host_hdr);
  /* Sent as it is, keep-alive included: the relay checks every later
     request's Host against this decision. */
  c->forward_from = h.head_len;
  ab_egress_relay_request (c, &h, true);
  ab_egress_conn_decide (e, c);
}

/* Inside a CONNECT tunnel: the first client bytes must not name another
   host than the CONNECT did (domain fronting, a ClientHello for a listed
   name smuggled to an unlisted one is handled by the CONNECT decision). */
void
ab_egress_head_tunnel (struct ab_egress *e, struct ab_egress_conn *c)
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
      ab_egress_conn_refuse (e, c, 403, NULL, NULL);
      return;
    }
  /* HTTP in the tunnel is read request by request like any plain HTTP;
     TLS and other protocols pass as they come (the CONNECT decision is for
     the stream). */
  if (http)
    ab_egress_relay_request (c, &h, true);
  else
    c->fr = AB_FR_BLIND;
  ab_egress_relay_start (e, c, c->head.d, http ? h.head_len : 0, http ? h.head_len : 0);
  return;

more:
  if (c->deadline == 0)
    c->deadline = ab_egress_now_ms () + e->opt.head_timeout_ms;
  ab_egress_conn_update (e, c);
}
