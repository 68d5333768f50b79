package io.clustermirror.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StateSignatureTest {

    @Test
    void everyKindOfStateKeyShouldBeRecognised() {
        assertThat(StateSignature.isStateKey(StateSerde.key(StateKey.mirror("m1"))))
                .isTrue();
        assertThat(StateSignature.isStateKey(StateSerde.key(StateKey.partition("m1", "orders", 3))))
                .isTrue();
        assertThat(StateSignature.isStateKey(StateSerde.key(StateKey.acls("m1"))))
                .isTrue();
        assertThat(StateSignature.isStateKey(StateSerde.key(StateKey.promotion("m1", "orders"))))
                .isTrue();
        assertThat(StateSignature.isStateKey(StateSerde.key(StateKey.divergence("m1", "orders"))))
                .isTrue();
    }

    @Test
    void aKeyFromANewerReleaseShouldStillBeRecognised() {
        assertThat(StateSignature.isStateKey(bytes("{\"v\":7,\"kind\":\"fence\",\"mirror\":\"m1\",\"epoch\":3}")))
                .isTrue();
    }

    @Test
    void ordinaryKeysShouldNotLookLikeStateKeys() {
        assertThat(StateSignature.isStateKey(null)).isFalse();
        assertThat(StateSignature.isStateKey(new byte[0])).isFalse();
        assertThat(StateSignature.isStateKey(bytes("order-42"))).isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"id\":42,\"customer\":\"x\"}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":1,\"kind\":\"mirror\"}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":\"1\",\"kind\":\"mirror\",\"mirror\":\"m\"}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":0,\"kind\":\"mirror\",\"mirror\":\"m\"}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":1,\"kind\":\" \",\"mirror\":\"m\"}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":1,\"kind\":\"mirror\",\"mirror\":null}")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("[{\"v\":1,\"kind\":\"mirror\",\"mirror\":\"m\"}]")))
                .isFalse();
        assertThat(StateSignature.isStateKey(bytes("{\"v\":1,\"kind\":\"mirror\",\"mirror\":\"m\"")))
                .isFalse();
        assertThat(StateSignature.isStateKey(new byte[] {'{', (byte) 0xff, (byte) 0xfe, '}'}))
                .isFalse();
    }

    @Test
    void anOversizedKeyShouldNotBeParsed() {
        String padded = "{\"v\":1,\"kind\":\"mirror\",\"mirror\":\"" + "m".repeat(StateSignature.MAX_KEY_BYTES) + "\"}";
        assertThat(StateSignature.isStateKey(bytes(padded))).isFalse();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
