/* The tuner plugin of tests/unit/tuner_test.cc, built in several variants:
 *   default                     picks allreduce.tree when it is a candidate, else defers (-1)
 *   MYRIAD_TEST_PLUGIN_BAD_INDEX returns an index past the candidates
 *   MYRIAD_TEST_PLUGIN_V2        declares version 2
 *   MYRIAD_TEST_PLUGIN_NO_SYMBOL exports no plugin symbol */
#include <string.h>

#include "myriad/plugin/tuner_v1.h"

static int chooseTree(void* context, const myrTunerCall_v1* call) {
  (void)context;
#ifdef MYRIAD_TEST_PLUGIN_BAD_INDEX
  return call->ncandidates + 3;
#else
  for (int i = 0; i < call->ncandidates; ++i)
    if (strcmp(call->names[i], "allreduce.tree") == 0) return i;
  return -1;
#endif
}

#ifndef MYRIAD_TEST_PLUGIN_NO_SYMBOL
#ifdef MYRIAD_TEST_PLUGIN_V2
#define VERSION 2
#else
#define VERSION MYRIAD_TUNER_PLUGIN_VERSION
#endif
__attribute__((visibility("default")))
const myrTunerPlugin_v1 myriadTunerPlugin_v1 = {VERSION, "test-tree", NULL, chooseTree, NULL};
#else
__attribute__((visibility("default"))) int myriadSomethingElse(void* c, const myrTunerCall_v1* call) {
  return chooseTree(c, call);
}
#endif
