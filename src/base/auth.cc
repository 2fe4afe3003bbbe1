// The primitive over libcrypto (see auth.h). Every function is a thin call into OpenSSL; a failure of
// OpenSSL here means a broken installation, so it aborts rather than hand back a weak key or nonce.
#include "base/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

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
  // EVP_DigestSign with an HMAC key: the interface neither OpenSSL 1.1.1 nor 3.x deprecates.
  Mac m{};
  EVP_PKEY* pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, nullptr, key, keyBytes);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = pkey && ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1;
  for (const Part& p : parts)
    if (ok && p.data && p.bytes) ok = EVP_DigestSignUpdate(ctx, p.data, p.bytes) == 1;
  size_t len = m.size();
  ok = ok && EVP_DigestSignFinal(ctx, m.data(), &len) == 1 && len == m.size();
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  if (!ok) fatal("HMAC");
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
