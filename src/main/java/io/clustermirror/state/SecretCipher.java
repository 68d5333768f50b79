package io.clustermirror.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-256-GCM through the JDK, for the secret values of mirror configs in {@code __mirror_state}. Keys are given as
 * {@code id:base64} (32 bytes each): the first seals, every one opens, so that an old key stays readable while records
 * move to the new one. Each sealed value names its key id and is bound (additional authenticated data) to the mirror
 * and the config key it belongs to, so that it cannot be moved to another.
 */
public final class SecretCipher {

    private static final int IV_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A sealed value: the key id, and base64 of IV followed by ciphertext and tag. */
    public record Sealed(String keyId, String data) {}

    private final Map<String, SecretKey> keys;

    private SecretCipher(Map<String, SecretKey> keys) {
        this.keys = keys;
    }

    /** @throws IllegalArgumentException naming the entry that is not {@code id:base64} of 32 bytes */
    public static SecretCipher of(List<String> entries) {
        Map<String, SecretKey> keys = new LinkedHashMap<>();
        for (String raw : entries) {
            String entry = raw.trim();
            if (entry.isEmpty() || entry.startsWith("#")) {
                continue;
            }
            int colon = entry.indexOf(':');
            String id = colon < 0 ? "" : entry.substring(0, colon).trim();
            byte[] key;
            try {
                key = colon < 0
                        ? new byte[0]
                        : Base64.getDecoder().decode(entry.substring(colon + 1).trim());
            } catch (IllegalArgumentException e) {
                key = new byte[0];
            }
            if (id.isEmpty() || key.length != 32) {
                throw new IllegalArgumentException("a state encryption key is 'id:<base64 of 32 bytes>'; the entry "
                        + (id.isEmpty() ? "#" + (keys.size() + 1) : "'" + id + "'") + " is not");
            }
            if (keys.putIfAbsent(id, new SecretKeySpec(key, "AES")) != null) {
                throw new IllegalArgumentException("state encryption key id '" + id + "' is given twice");
            }
        }
        return new SecretCipher(keys);
    }

    public static SecretCipher none() {
        return new SecretCipher(Map.of());
    }

    public boolean enabled() {
        return !keys.isEmpty();
    }

    /** The id of the key that seals; empty when none is configured. */
    public Optional<String> activeKeyId() {
        return keys.keySet().stream().findFirst();
    }

    public boolean has(String keyId) {
        return keys.containsKey(keyId);
    }

    public Sealed seal(String plaintext, String boundTo) {
        String id = activeKeyId().orElseThrow(() -> new IllegalStateException("no state encryption key"));
        try {
            byte[] iv = new byte[IV_BYTES];
            RANDOM.nextBytes(iv);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(id), new GCMParameterSpec(TAG_BITS, iv));
            cipher.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
            byte[] sealed = cipher.doFinal(plaintext.getBytes(StandardCharsets.UTF_8));
            return new Sealed(
                    id,
                    Base64.getEncoder()
                            .encodeToString(ByteBuffer.allocate(iv.length + sealed.length)
                                    .put(iv)
                                    .put(sealed)
                                    .array()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available: " + e.getMessage(), e);
        }
    }

    /**
     * @throws GeneralSecurityException when the value was not sealed with this key for {@code boundTo} (tampered,
     *     moved, or another key under the same id)
     */
    public String open(Sealed sealed, String boundTo) throws GeneralSecurityException {
        SecretKey key = keys.get(sealed.keyId());
        if (key == null) {
            throw new GeneralSecurityException("no key '" + sealed.keyId() + "'");
        }
        byte[] bytes = Base64.getDecoder().decode(sealed.data());
        if (bytes.length < IV_BYTES + TAG_BITS / 8) {
            throw new GeneralSecurityException("a sealed value is shorter than its IV and tag");
        }
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, bytes, 0, IV_BYTES));
        cipher.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
        return new String(cipher.doFinal(bytes, IV_BYTES, bytes.length - IV_BYTES), StandardCharsets.UTF_8);
    }
}
