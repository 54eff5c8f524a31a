/* The pin table and the host-side resolver.  A name's addresses come from
 * the policy's static pins or from the host's getaddrinfo (run by worker
 * threads, never on the event loop) and are pinned for the engine's life:
 * the proxy connects only to pinned addresses, and a later answer can never
 * move a name somewhere else (DNS rebinding). */
#include "config.h"

#include <netdb.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

static struct ab_egress_name *
name_find (struct ab_egress *e, const char *name)
{
  for (struct ab_egress_name *n = e->names; n; n = n->next)
    if (strcmp (n->name, name) == 0)
      return n;
  return NULL;
}

static void
job_free (struct ab_egress_job *j)
{
  free (j->name);
  free (j);
}

static void
enqueue (struct ab_egress *e, const char *name)
{
  struct ab_egress_job *j = xzalloc (sizeof *j);

  j->name = xstrdup (name);
  pthread_mutex_lock (&e->jobs_lock);
  if (e->jobs_tail)
    e->jobs_tail->next = j;
  else
    e->jobs = j;
  e->jobs_tail = j;
  pthread_cond_signal (&e->jobs_cond);
  pthread_mutex_unlock (&e->jobs_lock);
}

struct ab_egress_name *
ab_egress_name_lookup (struct ab_egress *e, const char *name, int kind, void *ptr)
{
  struct ab_egress_name *n = name_find (e, name);
  struct ab_egress_waiter *w;

  if (n == NULL)
    {
      /* Every name below an allowed wildcard can be asked for: without a
         bound a container could grow the table (and the worker queue)
         without end. */
      if (e->n_names >= AB_EGRESS_MAX_NAMES)
        {
          e->name_overflow.state = AB_NAME_FAILED;
          e->name_overflow.refusal = "too-many-names";
          return &e->name_overflow;
        }
      e->n_names++;
      n = xzalloc (sizeof *n);
      n->name = xstrdup (name);
      n->next = e->names;
      e->names = n;
      /* Static pins replace DNS entirely for their name. */
      for (size_t i = 0; i < e->policy.n_pins && n->n_addrs < AB_EGRESS_MAX_ADDRS; i++)
        if (strcmp (e->policy.pins[i].name, name) == 0)
          {
            n->addrs[n->n_addrs].family = e->policy.pins[i].family;
            memcpy (n->addrs[n->n_addrs].addr, e->policy.pins[i].addr, 16);
            n->n_addrs++;
          }
      n->state = n->n_addrs > 0 ? AB_NAME_RESOLVED : AB_NAME_FAILED;
    }
  if (n->state == AB_NAME_RESOLVED)
    return n;
  w = xzalloc (sizeof *w);
  w->kind = kind;
  w->ptr = ptr;
  w->next = n->waiters;
  n->waiters = w;
  if (n->state == AB_NAME_FAILED)
    {
      n->state = AB_NAME_PENDING;
      enqueue (e, name);
    }
  return NULL;
}

void
ab_egress_name_cancel (struct ab_egress *e, void *ptr)
{
  for (struct ab_egress_name *n = e->names; n; n = n->next)
    for (struct ab_egress_waiter **pw = &n->waiters; *pw;)
      {
        struct ab_egress_waiter *w = *pw;
        if (w->ptr == ptr)
          {
            *pw = w->next;
            free (w);
          }
        else
          pw = &w->next;
      }
}

static void
resolve (struct ab_egress_job *j)
{
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *res = NULL, *ai;

  j->gai_error = getaddrinfo (j->name, NULL, &hints, &res);
  if (j->gai_error != 0)
    return;
  for (ai = res; ai && j->n_addrs < AB_EGRESS_MAX_ADDRS; ai = ai->ai_next)
    {
      struct ab_egress_addr a;
      uint16_t port;
      bool dup = false;

      if (ab_egress_addr_from_sockaddr (ai->ai_addr, &a, &port) < 0)
        continue;
      for (size_t i = 0; i < j->n_addrs; i++)
        dup = dup || ab_egress_addr_equal (&j->addrs[i], &a);
      if (!dup)
        j->addrs[j->n_addrs++] = a;
    }
  freeaddrinfo (res);
}

static void *
worker_main (void *arg)
{
  struct ab_egress *e = arg;
  uint64_t one = 1;

  for (;;)
    {
      struct ab_egress_job *j;

      pthread_mutex_lock (&e->jobs_lock);
      while (e->jobs == NULL && !e->jobs_quit)
        pthread_cond_wait (&e->jobs_cond, &e->jobs_lock);
      if (e->jobs_quit)
        {
          pthread_mutex_unlock (&e->jobs_lock);
          return NULL;
        }
      j = e->jobs;
      e->jobs = j->next;
      if (e->jobs == NULL)
        e->jobs_tail = NULL;
      pthread_mutex_unlock (&e->jobs_lock);

      resolve (j);

      pthread_mutex_lock (&e->jobs_lock);
      j->next = e->done;
      e->done = j;
      pthread_mutex_unlock (&e->jobs_lock);
      if (write (e->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        abort (); /* the loop would never learn of the answer */
    }
}

int
ab_egress_resolver_start (struct ab_egress *e, ab_error_t *err)
{
  pthread_mutex_init (&e->jobs_lock, NULL);
  pthread_cond_init (&e->jobs_cond, NULL);
  for (size_t i = 0; i < AB_ARRAY_SIZE (e->workers); i++)
    {
      int r = pthread_create (&e->workers[i], NULL, worker_main, e);
      if (r != 0)
        return ab_error_set (err, r, "egress: start resolver thread");
      e->n_workers++;
    }
  return 0;
}

void
ab_egress_resolver_stop (struct ab_egress *e)
{
  pthread_mutex_lock (&e->jobs_lock);
  e->jobs_quit = true;
  pthread_cond_broadcast (&e->jobs_cond);
  pthread_mutex_unlock (&e->jobs_lock);
  /* A worker inside getaddrinfo finishes that lookup first (bounded by the
     host resolver's timeouts). */
  for (size_t i = 0; i < e->n_workers; i++)
    pthread_join (e->workers[i], NULL);
  e->n_workers = 0;
  while (e->jobs)
    {
      struct ab_egress_job *j = e->jobs;
      e->jobs = j->next;
      job_free (j);
    }
  e->jobs_tail = NULL;
  while (e->done)
    {
      struct ab_egress_job *j = e->done;
      e->done = j->next;
      job_free (j);
    }
  pthread_cond_destroy (&e->jobs_cond);
  pthread_mutex_destroy (&e->jobs_lock);
}

void
ab_egress_resolver_collect (struct ab_egress *e)
{
  struct ab_egress_job *done;

  pthread_mutex_lock (&e->jobs_lock);
  done = e->done;
  e->done = NULL;
  pthread_mutex_unlock (&e->jobs_lock);

  while (done)
    {
      struct ab_egress_job *j = done;
      struct ab_egress_name *n = name_find (e, j->name);
      struct ab_egress_waiter *w;

      done = j->next;
      if (n == NULL || n->state != AB_NAME_PENDING)
        {
          job_free (j);
          continue;
        }
      if (j->gai_error == 0 && j->n_addrs > 0)
        {
          memcpy (n->addrs, j->addrs, sizeof n->addrs);
          n->n_addrs = j->n_addrs;
          n->state = AB_NAME_RESOLVED;
        }
      else
        n->state = AB_NAME_FAILED; /* asked again on the next query */
      job_free (j);

      w = n->waiters;
      n->waiters = NULL;
      while (w)
        {
          struct ab_egress_waiter *next = w->next;
          e->resolved (e, w->kind, w->ptr, n);
          free (w);
          w = next;
        }
    }
}

void
ab_egress_names_free (struct ab_egress *e)
{
  while (e->names)
    {
      struct ab_egress_name *n = e->names;
      e->names = n->next;
      while (n->waiters)
        {
          struct ab_egress_waiter *w = n->waiters;
          n->waiters = w->next;
          free (w);
        }
      free (n->name);
      free (n);
    }
  e->n_names = 0;
}
