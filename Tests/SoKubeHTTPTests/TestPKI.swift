import Foundation

/// Test-only PKI (made once with openssl, valid 2020-2120; nothing else trusts it): a CA, a server certificate
/// for 127.0.0.1, localhost and kube.test (serial 0x1001), one for api.internal only (0x1002), and two client
/// certificates (serials 0x2001, 0x2002). EC P-256 keys in PKCS#8.
enum TestPKI {
    static let ca = """
        -----BEGIN CERTIFICATE-----
        MIIBXTCCAQOgAwIBAgIBCjAKBggqhkjOPQQDAjAVMRMwEQYDVQQDDApzby10ZXN0
        LWNhMCAXDTIwMDEwMTAwMDAwMFoYDzIxMjAwMTAxMDAwMDAwWjAVMRMwEQYDVQQD
        DApzby10ZXN0LWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENGtOEpFBXIEY
        kJ5Y1fPkcrw51mdKa+Fi9L9peFtszWejFCVkLX9qEZ6Sh2MF2IrKwfDnau2LIWxq
        EeqbFOeDiqNCMEAwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYD
        VR0OBBYEFFazUoFrijzzCVS5HyB9gh1lBpJwMAoGCCqGSM49BAMCA0gAMEUCIGmd
        Hn6ASXZMQNMbNjJWSZZD9yj4D5es9m5Z7L2PYo6CAiEA721If/T/u2f0EZuNgjWx
        OVcA6bya4Y48BSkreWf1HxY=
        -----END CERTIFICATE-----
        """ + "\n"
    static let serverCertificate = """
        -----BEGIN CERTIFICATE-----
        MIIBvDCCAWGgAwIBAgICEAEwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKc28tdGVz
        dC1jYTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowGTEXMBUGA1UE
        AwwOc28tdGVzdC1zZXJ2ZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATb3AX7
        AMzxBAEp0pEiqyfqLw5OOvv+8+H0de9nT0Tt1aGD+rcdrHsisZgSVyVX6+IUVsxl
        iBIxAMt5GMaEfYjho4GaMIGXMAkGA1UdEwQCMAAwDgYDVR0PAQH/BAQDAgWgMBMG
        A1UdJQQMMAoGCCsGAQUFBwMBMCUGA1UdEQQeMByHBH8AAAGCCWxvY2FsaG9zdIIJ
        a3ViZS50ZXN0MB0GA1UdDgQWBBTsdt0at5SJNLFLfAOJSbjShMrGgTAfBgNVHSME
        GDAWgBRWs1KBa4o88wlUuR8gfYIdZQaScDAKBggqhkjOPQQDAgNJADBGAiEApWY3
        svotjGKtn4NgYxIdXzuVxR3hXcZTTqyEbe3/BFwCIQDaTv54sOAx3Zr4xq5fJRAr
        HtgNalBxTZCikGd0eGvIGA==
        -----END CERTIFICATE-----
        """ + "\n"
    static let serverKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQapObD//bkBk7yCa
        zWYhJkDPA3+qGl3ze9uoBmW6O4GhRANCAATb3AX7AMzxBAEp0pEiqyfqLw5OOvv+
        8+H0de9nT0Tt1aGD+rcdrHsisZgSVyVX6+IUVsxliBIxAMt5GMaEfYjh
        -----END PRIVATE KEY-----
        """ + "\n"
    static let namedCertificate = """
        -----BEGIN CERTIFICATE-----
        MIIBqzCCAVGgAwIBAgICEAIwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKc28tdGVz
        dC1jYTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowFzEVMBMGA1UE
        AwwMYXBpLmludGVybmFsMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEVi64dpp0
        BaKjrJSrkP5Ff2IR2BsOIc1INnmxoYuPHUKw7cp6YNBWgCArbRhV6bji7DARFtRZ
        U5DwVruITIs8laOBjDCBiTAJBgNVHRMEAjAAMA4GA1UdDwEB/wQEAwIFoDATBgNV
        HSUEDDAKBggrBgEFBQcDATAXBgNVHREEEDAOggxhcGkuaW50ZXJuYWwwHQYDVR0O
        BBYEFEDhDlYuwSEzAY8ggY6RRqR+35gNMB8GA1UdIwQYMBaAFFazUoFrijzzCVS5
        HyB9gh1lBpJwMAoGCCqGSM49BAMCA0gAMEUCIEg5HOstaVWXJY5bNlFK5551jp9k
        UySnxxAHQlAk0hgNAiEA0kffa/Rd2gDfk70fv5m1RVO9MYmt4KWC3VuFk0fKbdc=
        -----END CERTIFICATE-----
        """ + "\n"
    static let namedKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgfwPnRiahJefw9ohF
        hL/agln4lXfHtpNjHQr4nQXTbFWhRANCAARWLrh2mnQFoqOslKuQ/kV/YhHYGw4h
        zUg2ebGhi48dQrDtynpg0FaAICttGFXpuOLsMBEW1FlTkPBWu4hMizyV
        -----END PRIVATE KEY-----
        """ + "\n"
    static let client1Certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBojCCAUegAwIBAgICIAEwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKc28tdGVz
        dC1jYTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowKDEUMBIGA1UE
        AwwLZXhlYy11c2VyLTExEDAOBgNVBAoMB3NvLXRlc3QwWTATBgcqhkjOPQIBBggq
        hkjOPQMBBwNCAASgmSaGXMj8epabJeHy22bSokkcl5iaKS14NAvmMQl2wufC/+Bk
        V99vdpTQglpQLYGzgjUUbol7OrUW134V/LLjo3IwcDAJBgNVHRMEAjAAMA4GA1Ud
        DwEB/wQEAwIFoDATBgNVHSUEDDAKBggrBgEFBQcDAjAdBgNVHQ4EFgQUzDOX1Byo
        dsN4JyVIHH/BCn1i+lwwHwYDVR0jBBgwFoAUVrNSgWuKPPMJVLkfIH2CHWUGknAw
        CgYIKoZIzj0EAwIDSQAwRgIhAM9Rn8aIs3ZyUizg0y+aEN+n0MJAvlR2W7CJLen2
        mdbBAiEA8uOvCbBzN+4gGxlzDtsMNM9zLABd6UgEf7zhwJ2100k=
        -----END CERTIFICATE-----
        """ + "\n"
    static let client1Key = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgatVMIhIOlBy/SOx6
        SamlQB3pIPPqDHXKwfRRV//AX6yhRANCAASgmSaGXMj8epabJeHy22bSokkcl5ia
        KS14NAvmMQl2wufC/+BkV99vdpTQglpQLYGzgjUUbol7OrUW134V/LLj
        -----END PRIVATE KEY-----
        """ + "\n"
    static let client2Certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBoTCCAUegAwIBAgICIAIwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKc28tdGVz
        dC1jYTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowKDEUMBIGA1UE
        AwwLZXhlYy11c2VyLTIxEDAOBgNVBAoMB3NvLXRlc3QwWTATBgcqhkjOPQIBBggq
        hkjOPQMBBwNCAASR+urGGqEszf7qok9GYEpYNpmDWc2kANnHRib59NiZZnr0DNlx
        PlLfAq1SwjYUq5qc4Raa9zKb5/LwhsEcQhTjo3IwcDAJBgNVHRMEAjAAMA4GA1Ud
        DwEB/wQEAwIFoDATBgNVHSUEDDAKBggrBgEFBQcDAjAdBgNVHQ4EFgQU3eucX6Uh
        mHObGxVRsfsDN35lJuYwHwYDVR0jBBgwFoAUVrNSgWuKPPMJVLkfIH2CHWUGknAw
        CgYIKoZIzj0EAwIDSAAwRQIge8aspbaEEVR5mCB8cTTDrAE06phOwqZgxYhMNp7q
        3mMCIQCpLV8cdTEp5A50Gc3IJ5CoO4lT2PeeDNGaOa5jGh8Ahw==
        -----END CERTIFICATE-----
        """ + "\n"
    static let client2Key = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgm4VCUEqKoaJKFErI
        1Ar4UOn2djBA/cbfo7GeQqCowAmhRANCAASR+urGGqEszf7qok9GYEpYNpmDWc2k
        ANnHRib59NiZZnr0DNlxPlLfAq1SwjYUq5qc4Raa9zKb5/LwhsEcQhTj
        -----END PRIVATE KEY-----
        """ + "\n"
}
