// OpenSSL 3's libcrypto (Debian's libssl-dev): SHA-256, HMAC-SHA256, the constant-time compare and RS256 signing,
// for SoBasics' SHA256.swift, HMAC.swift and RSAPrivateKey.swift.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
