/* The tuner plugin interface, version 1: a shared library named by MYRIAD_TUNER_PLUGIN exports one
 * `myrTunerPlugin_v1 myriadTunerPlugin_v1` and may override the cost model's choice of algorithm.
 *
 * For each distinct call shape Myriad calls `choose` with the candidates (the registered algorithms that can
 * run the call) and the model's predicted time of each; the plugin returns the index of the one to run, or
 * -1 to leave the model's choice. Every rank must choose the same algorithm: decide only from what the call
 * gives (it is the same on every rank), never from per-process state such as timings or random numbers.
 * MYRIAD_ALGO, when set, comes before the plugin. A library that cannot be loaded, lacks the symbol, has
 * another version, fails init or returns an index that is no candidate is reported as a warning and the
 * model chooses. `choose` may be called from several threads, one at a time. Plain C, no Myriad headers.
 */
#ifndef MYRIAD_PLUGIN_TUNER_V1_H_
#define MYRIAD_PLUGIN_TUNER_V1_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MYRIAD_TUNER_PLUGIN_VERSION 1
#define MYRIAD_TUNER_PLUGIN_SYMBOL "myriadTunerPlugin_v1"

/* One call shape. */
typedef struct {
  const char* collective;    /* "allreduce", "allgather", "reducescatter", "alltoall", ... (registry prefix) */
  size_t bytes;              /* per-rank size the collective is sized by; 0 for all-to-allv */
  int nranks;                /* ranks of the communicator */
  int nhosts;                /* hosts they are on */
  int maxLocal;              /* most ranks on one host */
  int ncandidates;           /* at least 2 */
  const char* const* names;  /* registry names, e.g. "allreduce.ring" */
  const double* predictedUs; /* the model's prediction per candidate; negative: could not be predicted */
} myrTunerCall_v1;

typedef struct {
  int version;      /* MYRIAD_TUNER_PLUGIN_VERSION */
  const char* name; /* for logs */
  /* Called once when loaded; returns 0 on success and may set *context. May be NULL. */
  int (*init)(void** context);
  /* The index of the candidate to run, or -1 to keep the model's choice. */
  int (*choose)(void* context, const myrTunerCall_v1* call);
  /* Called once at process exit. May be NULL. */
  void (*destroy)(void* context);
} myrTunerPlugin_v1;

#ifdef __cplusplus
}
#endif

#endif /* MYRIAD_PLUGIN_TUNER_V1_H_ */
