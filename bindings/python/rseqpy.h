/* The functions of rseq._percpu that the Python package calls.

   build_rseq.py hands this file to cffi's cdef as it is, so it holds
   plain declarations only (no preprocessor lines, no attributes); the
   module's C files include it too, so the compiler checks that the
   definitions match what Python was told.  */

/* The process, its rseq area and its glibc (glibc.c).  */
int rseqpy_cpu (void);
int rseqpy_node (void);
int rseqpy_mm_cid (void);
int rseqpy_registered (void);
unsigned int rseqpy_rseq_size (void);
long rseqpy_rseq_offset (void);
unsigned long rseqpy_auxv (unsigned long type);
int rseqpy_patched_glibc (void);
int rseqpy_current_cpu (int field);
int rseqpy_nr_slots (void);
int rseqpy_cpu_opv (int count, const int32_t *types, const uint32_t *lens,
		    const uint64_t *a, const uint64_t *b, int cpu);
int rseqpy_cpu_opv_present (void);
int rseqpy_set_fallback (int mode);
long rseqpy_thread_stat (int which);

/* PerCpuCounter, AtomicCounter, LockedCounter (counters.c).  */
typedef struct rseqpy_counter rseqpy_counter;
rseqpy_counter *rseqpy_counter_new (int kind, int field);
void rseqpy_counter_free (rseqpy_counter *c);
int rseqpy_counter_add_many (rseqpy_counter *c, long n, long count);
int rseqpy_counter_nr_slots (rseqpy_counter *c);
int rseqpy_counter_values (rseqpy_counter *c, long *out, int n);
long rseqpy_counter_sum (rseqpy_counter *c);
unsigned long rseqpy_counter_aborts (rseqpy_counter *c);

/* PerCpuList and PerCpuBuffer on percpu/percpu.c (structures.c).  The
   _percpu accessors give the percpu.c structure inside, for tests.  */
typedef struct rseqpy_list rseqpy_list;
rseqpy_list *rseqpy_list_new (long nodes_count);
void rseqpy_list_free (rseqpy_list *l);
long rseqpy_list_churn (rseqpy_list *l, long n);
long rseqpy_list_values (rseqpy_list *l, long *out, long n);
struct percpu_list *rseqpy_list_percpu (rseqpy_list *l);

typedef struct rseqpy_buffer rseqpy_buffer;
rseqpy_buffer *rseqpy_buffer_new (long items_count, long item_size);
void rseqpy_buffer_free (rseqpy_buffer *b);
long rseqpy_buffer_churn (rseqpy_buffer *b, long n);
long rseqpy_buffer_values (rseqpy_buffer *b, long *out, long n);
struct percpu_buffer *rseqpy_buffer_percpu (rseqpy_buffer *b);
