// The rendezvous of a Slurm step started by srun without MPI: its first host, from Slurm's compressed hostlist
// (SLURM_STEP_NODELIST), and a port from the job and step ids. Invariant: every task of a step computes the
// same host:port from the same variables, and Slurm places task 0 (which listens there) on the step's first node.
#pragma once

#include <cstdint>
#include <string>

namespace myriad::bench {

// The ports srun runs derive: kSlurmPortBase + (jobId * kSlurmPortStride + stepId) mod kSlurmPortSpan, that is
// 20000..29999: unprivileged and below Linux's ephemeral range (32768 and up), so no connect() holds one.
constexpr int kSlurmPortBase = 20000;
constexpr int kSlurmPortSpan = 10000;
constexpr int kSlurmPortStride = 97;  // consecutive jobs land far apart, the steps of one job next to each other

// The first host of a Slurm hostlist such as "node[01-04,07],gpu-a[1-2]" (node01): comma-separated entries,
// each a name with bracketed ranges (zero padding kept: [008-010] is 008, 009, 010) in one or more places.
// The whole list is checked; false with *error naming the fault for an empty list or entry, unbalanced or
// nested brackets, an empty range, a bound that is not a number, or a range that runs backwards.
bool slurmFirstHost(const std::string& hostlist, std::string* host, std::string* error);

// The port of job jobId's step stepId (both decimal, as SLURM_JOB_ID and SLURM_STEP_ID give them); false with
// *error naming the value that is not a decimal number below 2^32.
bool slurmPort(const std::string& jobId, const std::string& stepId, int* port, std::string* error);

// MYRIAD_COMM_ID for the current srun step, from SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST), SLURM_JOB_ID and
// SLURM_STEP_ID: "host:port". False with *error naming the variable that is missing or malformed.
bool slurmCommId(std::string* commId, std::string* error);

}  // namespace myriad::bench
