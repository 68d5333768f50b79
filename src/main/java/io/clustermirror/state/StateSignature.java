package io.clustermirror.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Whether a record looks like one of a Cluster Mirror state topic, whatever that topic is named and whichever release
 * wrote it: its key is a JSON object in the shape of a {@link StateKey}, a format version {@code v} (an integer from
 * 1, newer versions included), a non-blank {@code kind} and a {@code mirror} name. Values are not looked at (a
 * tombstone has none, a sealed mirror record is ciphertext). Pure; used to refuse mirroring into another instance's
 * state topic (issue 17).
 */
public final class StateSignature {

    /** A state key is a few hundred bytes at most; longer keys are not parsed. */
    static final int MAX_KEY_BYTES = 4096;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private StateSignature() {}

    /** True when the record key parses as a state record's key. */
    public static boolean isStateKey(byte[] key) {
        if (key == null || key.length < 2 || key.length > MAX_KEY_BYTES || key[0] != '{') {
            return false;
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(key);
        } catch (IOException e) {
            return false;
        }
        if (node == null || !node.isObject()) {
            return false;
        }
        JsonNode v = node.get("v");
        JsonNode kind = node.get("kind");
        JsonNode mirror = node.get("mirror");
        return v != null
                && v.isIntegralNumber()
                && v.canConvertToInt()
                && v.intValue() >= 1
                && kind != null
                && kind.isTextual()
                && !kind.textValue().isBlank()
                && mirror != null
                && mirror.isTextual();
    }
}
