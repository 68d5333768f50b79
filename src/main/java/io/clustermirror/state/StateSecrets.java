package io.clustermirror.state;

import io.clustermirror.mirror.Mirror;
import java.security.GeneralSecurityException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * How a mirror's secret config values are kept in {@code __mirror_state}: sealed with {@link SecretCipher} when a key
 * is configured, in clear (as before) when none is. Which values are secret is the config rules' call.
 */
public final class StateSecrets {

    /** A mirror record this service cannot open: the key ids it lacks, or why. */
    public static final class Unreadable extends Exception {
        private static final long serialVersionUID = 1L;

        Unreadable(String reason) {
            super(reason, null, false, false);
        }
    }

    private final SecretCipher cipher;
    private final Predicate<String> sensitive;

    public StateSecrets(SecretCipher cipher, Predicate<String> sensitive) {
        this.cipher = cipher;
        this.sensitive = sensitive;
    }

    public static StateSecrets clear() {
        return new StateSecrets(SecretCipher.none(), key -> false);
    }

    public SecretCipher cipher() {
        return cipher;
    }

    MirrorRecord seal(Mirror mirror) {
        if (!cipher.enabled()) {
            return MirrorRecord.of(mirror, mirror.config().values(), null);
        }
        Map<String, String> clear = new TreeMap<>();
        Map<String, SecretCipher.Sealed> sealed = new TreeMap<>();
        mirror.config().values().forEach((key, value) -> {
            if (sensitive.test(key) && !value.isEmpty()) {
                sealed.put(key, cipher.seal(value, boundTo(mirror.name(), key)));
            } else {
                clear.put(key, value);
            }
        });
        return MirrorRecord.of(mirror, clear, sealed.isEmpty() ? null : sealed);
    }

    Mirror open(MirrorRecord record) throws Unreadable {
        if (record.sealed() == null || record.sealed().isEmpty()) {
            return record.toMirror(record.config());
        }
        Set<String> missing = new TreeSet<>();
        for (Map.Entry<String, SecretCipher.Sealed> entry : record.sealed().entrySet()) {
            SecretCipher.Sealed value = entry.getValue();
            if (value == null || value.keyId() == null || value.data() == null) {
                throw new Unreadable("the sealed value of '" + entry.getKey() + "' is incomplete");
            }
            if (!cipher.has(value.keyId())) {
                missing.add(value.keyId());
            }
        }
        if (!missing.isEmpty()) {
            throw new Unreadable("sealed with key id(s) " + missing + ", which this service is not given");
        }
        Map<String, String> values = new HashMap<>(record.config());
        for (Map.Entry<String, SecretCipher.Sealed> entry : record.sealed().entrySet()) {
            try {
                values.put(entry.getKey(), cipher.open(entry.getValue(), boundTo(record.name(), entry.getKey())));
            } catch (GeneralSecurityException | IllegalArgumentException e) { // a tag that fails, or bad base64
                throw new Unreadable("the value of '" + entry.getKey() + "' does not open with key id '"
                        + entry.getValue().keyId() + "' (another key under that id, or a changed record)");
            }
        }
        return record.toMirror(values);
    }

    /** Whether the record should be written again: secrets in clear while a key is given, or sealed with an old key. */
    boolean stale(MirrorRecord record) {
        if (!cipher.enabled()) {
            return false;
        }
        String active = cipher.activeKeyId().orElseThrow();
        boolean oldKey = record.sealed() != null
                && record.sealed().values().stream().anyMatch(s -> !s.keyId().equals(active));
        return holdsClearSecrets(record) || oldKey;
    }

    /** Whether the record holds a secret value in clear. */
    boolean holdsClearSecrets(MirrorRecord record) {
        return record.config().entrySet().stream()
                .anyMatch(e -> sensitive.test(e.getKey()) && !e.getValue().isEmpty());
    }

    private static String boundTo(String mirror, String key) {
        return "cluster-mirror/" + mirror + "/" + key;
    }
}
