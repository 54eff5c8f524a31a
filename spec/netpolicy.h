/* The network policies of a config, typed: what the dev.agentbox.net.*
 * annotations (and the --egress-policy baseline) say, parsed by their
 * grammars here, on the spec floor, so that the wall (netns/nft*.c), the
 * egress engine (netns/egress*.c), the plan and `audit` all read one typed
 * policy and none parses the text again.
 *
 *   dev.agentbox.net.allow           ADDR[/PREFIX][:PORT][/tcp|/udp], ...
 *                                    (spec/net-allow.c)
 *   dev.agentbox.net.allow-domains   ENTRY[,ENTRY...]
 *   dev.agentbox.net.deny-domains    ENTRY[,ENTRY...]
 *   dev.agentbox.net.pins            NAME=ADDRESS[,NAME=ADDRESS...]
 *                                    (spec/egress-policy.c; the grammar is
 *                                    in netns/egress.h, which enforces it)
 */
#ifndef AB_SPEC_NETPOLICY_H
#define AB_SPEC_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct ab_kvlist;

/* ---- addresses: dev.agentbox.net.allow -------------------------------- */

#define AB_ANNOT_NET_ALLOW "dev.agentbox.net.allow"

struct ab_net_allow
{
  int family;       /* AF_INET or AF_INET6 */
  uint8_t addr[16]; /* network byte order; first 4 bytes for AF_INET */
  uint8_t prefix;   /* 0..32 / 0..128 */
  uint16_t port;    /* host byte order, 0 = any port */
  int proto;        /* 0 = tcp and udp, IPPROTO_TCP, IPPROTO_UDP */
};

struct ab_net_policy
{
  bool present; /* the annotation was given */
  struct ab_net_allow *allow;
  size_t n_allow;
};

/* Parse the annotation value.  Errors name the entry:
   annotations.dev.agentbox.net.allow: entry "300.1.2.3:80": invalid IPv4 address */
int ab_net_policy_parse (const char *value, struct ab_net_policy *out, ab_error_t *err);
void ab_net_policy_free (struct ab_net_policy *p);

/* ---- names: the domain allowlist --------------------------------------- */

#define AB_ANNOT_NET_ALLOW_DOMAINS "dev.agentbox.net.allow-domains"
#define AB_ANNOT_NET_DENY_DOMAINS "dev.agentbox.net.deny-domains"
#define AB_ANNOT_NET_PINS "dev.agentbox.net.pins"

#define AB_EGRESS_NAME_MAX 253      /* presentation form, no trailing dot */
#define AB_EGRESS_MAX_RULE_PORTS 16 /* ports of one entry */
#define AB_EGRESS_MAX_ENTRIES 512   /* entries of one annotation */

/* One allow or deny entry. */
struct ab_egress_rule
{
  char
      *pattern; /* normalised host as written: "example.com", "*.example.com", "192.0.2.1", "[2001:db8::1]" */
  char *name;   /* exact name, or the suffix of a wildcard ("example.com"); NULL for a literal */
  bool wildcard; /* pattern is "*." name */
  int family;    /* 0 for names; AF_INET or AF_INET6 for an IP literal */
  uint8_t addr[16];
  uint16_t ports[AB_EGRESS_MAX_RULE_PORTS];
  size_t n_ports; /* allow: never 0 (defaults filled in); deny: 0 = every port */
};

struct ab_egress_pin
{
  char *name; /* normalised exact name */
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
};

struct ab_egress_policy
{
  bool enabled; /* some allow list was given (possibly empty) */
  struct ab_egress_rule *allow;
  size_t n_allow;
  struct ab_egress_rule *deny;
  size_t n_deny;
  struct ab_egress_pin *pins;
  size_t n_pins;
};

/* The policy the annotations give (out->enabled when allow-domains is
   there).  Errors name the annotation and the entry, class AB_EC_CONFIG:
     annotations.dev.agentbox.net.allow-domains: entry "*.": empty name */
int ab_egress_policy_parse (const struct ab_kvlist *annotations, struct ab_egress_policy *out, ab_error_t *err);

/* The effective policy of one run: the admin's baseline (from
   ab_egress_baseline_load; NULL or disabled: none) narrowed by the run's
   (from the annotations):
     allow = baseline ∩ per-run (per-run absent: the baseline's),
     deny  = baseline ∪ per-run,
     pins  = the baseline's, plus per-run pins of names the baseline allows.
   Without baseline the run's is the policy; without either, the policy is
   disabled (out->enabled false: no egress by name at all).  A per-run pin
   of a name the baseline does not allow is an error. */
int ab_egress_policy_narrow (const struct ab_egress_policy *baseline, const struct ab_egress_policy *run,
                             struct ab_egress_policy *out, ab_error_t *err);

/* Load the admin baseline (--egress-policy FILE): a JSON object whose members
   are the annotation keys above, each a string in the annotation grammar or
   an array of entry strings.  Unknown members are refused. */
int ab_egress_baseline_load (int dirfd, const char *path, struct ab_egress_policy *out, ab_error_t *err);

void ab_egress_policy_free (struct ab_egress_policy *p);
void ab_egress_policy_copy (struct ab_egress_policy *dst, const struct ab_egress_policy *src);

/* The TCP ports the netns must redirect to the proxy: every port of every
   allow entry (80 and 443 at least), sorted, without duplicates.  Returns
   the count (at most max are written). */
size_t ab_egress_policy_ports (const struct ab_egress_policy *p, uint16_t *ports, size_t max);

/* Decide for a normalised name (or IP literal text) and port.  Returns true
   when allowed; rule[rule_len] gets the deciding rule, e.g.
   "allow:*.example.com", "deny:bad.example", "default-deny",
   "port-not-allowed".  port 0 asks "may this name be resolved at all" (the
   DNS stub's question). */
bool ab_egress_policy_decide (const struct ab_egress_policy *p, const char *name, uint16_t port, char *rule,
                              size_t rule_len);

/* Normalise a host name: lower-case, one trailing dot dropped, LDH/'_'
   labels of 1..63 bytes, at most 253 bytes, last label not all digits, and
   not a form inet_aton would read as an address ("0x7f.1", "2130706433").
   Returns 0 and writes out[AB_EGRESS_NAME_MAX + 1], or -1. */
int ab_egress_name_normalize (const char *in, size_t len, char *out);

/* ---- IP literals --------------------------------------------------------- */

struct ab_egress_addr
{
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
};

/* Strict literals only: dotted quad with four decimal parts, or IPv6 with or
   without brackets.  Returns 0 or -1. */
int ab_egress_ip_parse (const char *s, size_t len, struct ab_egress_addr *out);
/* "192.0.2.1" or "2001:db8::1" (no brackets). */
void ab_egress_addr_format (const struct ab_egress_addr *a, char *buf, size_t len);
/* The literal as a rule pattern / decision name: "192.0.2.1", "[2001:db8::1]". */
void ab_egress_addr_pattern (const struct ab_egress_addr *a, char *buf, size_t len);
bool ab_egress_addr_equal (const struct ab_egress_addr *a, const struct ab_egress_addr *b);

#endif
