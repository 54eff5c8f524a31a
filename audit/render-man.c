/* The rule catalogue as man(7) source, for the RULES section of
 * agentbox-audit(8) (`agentbox audit --rules --format man`). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "audit/audit.h"

/* Text for a man page: a backslash doubled, a leading dot or quote escaped. */
static void
roff (FILE *f, const char *s)
{
  if (*s == '.' || *s == '\'')
    fputs ("\\&", f);
  for (; *s; s++)
    {
      if (*s == '\\')
        fputs ("\\e", f);
      else if (*s == '-')
        fputs ("\\-", f);
      else
        fputc (*s, f);
    }
}

void
ab_audit_render_rules_man (FILE *f)
{
  size_t n;
  const struct ab_audit_rule *rules = ab_audit_rules (&n);

  for (size_t i = 0; i < n; i++)
    {
      fputs (".TP\n.B ", f);
      roff (f, rules[i].id);
      fprintf (f, " \\fR(%s)\\fP\n", ab_audit_severity_name (rules[i].severity));
      roff (f, rules[i].title);
      fputs (".\n", f);
      roff (f, rules[i].why);
      fputs ("\n.br\nFix: ", f);
      roff (f, rules[i].fix);
      fputc ('\n', f);
    }
}
