/* A stand-in for glibc's <support/xthread.h> (see check.h): the
   pthread calls the areas' glibc tests use, ending the test with status
   1 when one fails.  */
#ifndef SUPPORT_XTHREAD_H
#define SUPPORT_XTHREAD_H

#include <pthread.h>
#include <string.h>
#include <support/check.h>

/* End the test if the pthread function WHAT returned the error ERR.  */
static inline void
support_pthread_check (int err, const char *what)
{
  if (err != 0)
    FAIL_EXIT1 ("%s: %s", what, strerror (err));
}

static inline pthread_t
xpthread_create (pthread_attr_t *attr, void *(*start) (void *), void *arg)
{
  pthread_t thread;
  support_pthread_check (pthread_create (&thread, attr, start, arg),
			 "pthread_create");
  return thread;
}

static inline void *
xpthread_join (pthread_t thread)
{
  void *result;
  support_pthread_check (pthread_join (thread, &result), "pthread_join");
  return result;
}

static inline void
xpthread_barrier_init (pthread_barrier_t *barrier,
		       pthread_barrierattr_t *attr, unsigned int count)
{
  support_pthread_check (pthread_barrier_init (barrier, attr, count),
			 "pthread_barrier_init");
}

static inline void
xpthread_barrier_destroy (pthread_barrier_t *barrier)
{
  support_pthread_check (pthread_barrier_destroy (barrier),
			 "pthread_barrier_destroy");
}

/* 1 in the one thread that pthread_barrier_wait elects, else 0.  */
static inline int
xpthread_barrier_wait (pthread_barrier_t *barrier)
{
  int ret = pthread_barrier_wait (barrier);
  if (ret == PTHREAD_BARRIER_SERIAL_THREAD)
    return 1;
  support_pthread_check (ret, "pthread_barrier_wait");
  return 0;
}

static inline void
xpthread_mutex_lock (pthread_mutex_t *mutex)
{
  support_pthread_check (pthread_mutex_lock (mutex), "pthread_mutex_lock");
}

static inline void
xpthread_mutex_unlock (pthread_mutex_t *mutex)
{
  support_pthread_check (pthread_mutex_unlock (mutex),
			 "pthread_mutex_unlock");
}

static inline void
xpthread_cond_wait (pthread_cond_t *cond, pthread_mutex_t *mutex)
{
  support_pthread_check (pthread_cond_wait (cond, mutex),
			 "pthread_cond_wait");
}

static inline void
xpthread_cond_signal (pthread_cond_t *cond)
{
  support_pthread_check (pthread_cond_signal (cond), "pthread_cond_signal");
}

#endif /* support/xthread.h */
