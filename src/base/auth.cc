// The primitive over libcrypto (see auth.h). Every function is a thin call into OpenSSL; a failure of
// OpenSSL here means a broken installation, so it aborts rather than hand back a weak key or nonce.
#include "base/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace myriad::auth {
namespace {
[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "myriad: libcrypto %s failed; cannot authenticate\n", what);
  std::abort();
}
}  // namespace

void hkdf(const uint8_t* ikm, size_t ikmBytes, std::string_view salt, std::string_view info, uint8_t* out,
          size_t outBytes) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  bool ok = ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
            EVP_PKEY_CTX_set1_hkdf_salt(ctx, reinterpret_cast<const unsigned char*>(salt.data()),
                                        static_cast<int>(salt.size())) > 0 &&
            EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, static_cast<int>(ikmBytes)) > 0 &&
            EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const unsigned char*>(info.data()),
                                        static_cast<int>(info.size())) > 0;
  size_t len = outBytes;
  ok = ok && EVP_PKEY_derive(ctx, out, &len) > 0 && len == outBytes;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) fatal("HKDF");
}

Key deriveKey(const uint8_t* secret, size_t secretBytes, std::string_view info) {
  Key k{};
  hkdf(secret, secretBytes, "myriad", info, k.data(), k.size());
  return k;
}

void pbkdf2(std::string_view password, std::string_view salt, int iterations, uint8_t* out, size_t outBytes) {
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()), iterations,
                        EVP_sha256(), static_cast<int>(outBytes), out) != 1)
    fatal("PBKDF2");
}

Mac hmac(const uint8_t* key, size_t keyBytes, std::initializer_list<Part> parts) {
  // One-shot HMAC() over the parts gathered in one buffer (at most a datagram): 7x faster than an
  // EVP_PKEY per call on OpenSSL 3, and not deprecated there or in 1.1.1.
  size_t total = 0;
  for (const Part& p : parts) total += p.data ? p.bytes : 0;
  std::vector<uint8_t> buf(total);
  size_t at = 0;
  for (const Part& p : parts) {
    if (!p.data || !p.bytes) continue;
    std::memcpy(buf.data() + at, p.data, p.bytes);
    at += p.bytes;
  }
  Mac m{};
  unsigned len = 0;
  if (!HMAC(EVP_sha256(), key, static_cast<int>(keyBytes), buf.data(), buf.size(), m.data(), &len) || len != m.size())
    fatal("HMAC");
  return m;
}

bool equal(const void* a, const void* b, size_t bytes) {
  return CRYPTO_memcmp(a, b, bytes) == 0;
}

Nonce nonce() {
  Nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) fatal("RAND_bytes");
  return n;
}

}  // namespace myriad::auth
