package io.clustermirror.mirror;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AclRuleTest {

    @Test
    void ruleShouldParseAllFiveParts() {
        AclRule rule = AclRule.parse("topic;orders\\..*;read;allow;User:alice");

        assertThat(rule.resourceType()).isEqualTo("TOPIC");
        assertThat(rule.resourceName().matcher("orders.eu").matches()).isTrue();
        assertThat(rule.operation()).isEqualTo("READ");
        assertThat(rule.permissionType()).isEqualTo("ALLOW");
        assertThat(rule.principal()).isEqualTo("User:alice");
    }

    @Test
    void wildcardsShouldBeAccepted() {
        assertThat(AclRule.parse("*;.*;*;*;*").principal()).isEqualTo("*");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "TOPIC;.*;READ;ALLOW",
                "TOPIC;(;READ;ALLOW;User:a",
                "QUEUE;.*;READ;ALLOW;User:a",
                "TOPIC;.*;SMELL;ALLOW;User:a",
                "TOPIC;.*;READ;MAYBE;User:a",
                "TOPIC;.*;READ;ALLOW;alice",
                "TOPIC;.*;READ;ALLOW;User:a;x"
            })
    void malformedRulesShouldBeRefusedWithAReason(String rule) {
        assertThatThrownBy(() -> AclRule.parse(rule))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ACL rule");
    }
}
