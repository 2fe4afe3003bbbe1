// The cryptographic primitive under every hello (docs/security.md), over OpenSSL's libcrypto: HKDF-SHA256
// and PBKDF2-SHA256 key derivation, HMAC-SHA256, a constant-time compare and nonces from the system's CSPRNG.
// Keys and MACs are plain 32-byte values; nothing here logs or keeps a key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace myriad::auth {

using Key = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;
using Nonce = std::array<uint8_t, 16>;

// HKDF-SHA256 (RFC 5869): `out` bytes from input key material, a salt and a context label.
void hkdf(const uint8_t* ikm, size_t ikmBytes, std::string_view salt, std::string_view info, uint8_t* out,
          size_t outBytes);
// A key for one purpose (`info`) from a high-entropy secret, e.g. a communicator's 16-byte secret.
Key deriveKey(const uint8_t* secret, size_t secretBytes, std::string_view info);
// PBKDF2-HMAC-SHA256 (RFC 8018), for secrets people choose (MYRIAD_COMM_SECRET): slow on purpose.
void pbkdf2(std::string_view password, std::string_view salt, int iterations, uint8_t* out, size_t outBytes);
constexpr int kPbkdf2Iterations = 20000;

// HMAC-SHA256 over the concatenation of the parts (an empty part is skipped).
struct Part {
  const void* data = nullptr;
  size_t bytes = 0;
};
Mac hmac(const uint8_t* key, size_t keyBytes, std::initializer_list<Part> parts);
inline Mac hmac(const Key& key, std::initializer_list<Part> parts) {
  return hmac(key.data(), key.size(), parts);
}

// Constant time in the length (CRYPTO_memcmp): equal bytes, without leaking where they differ.
bool equal(const void* a, const void* b, size_t bytes);

Nonce nonce();  // RAND_bytes; aborts the process if the CSPRNG fails (never a predictable nonce)

}  // namespace myriad::auth
