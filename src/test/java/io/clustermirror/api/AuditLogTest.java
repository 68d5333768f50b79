package io.clustermirror.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AuditLogTest {

    @Test
    void aValueFromTheRequestShouldStayOnItsOwnLine() {
        String forged = AuditLog.clean("x\nprincipal=admin operation=DELETE \"quoted\"\r");

        assertThat(forged).doesNotContain("\n").doesNotContain("\r").doesNotContain("\"");
        assertThat(forged).isEqualTo("x\\u000aprincipal=admin operation=DELETE \\u0022quoted\\u0022\\u000d");
        assertThat(AuditLog.clean("dr-east")).isEqualTo("dr-east");
        assertThat(AuditLog.clean("a".repeat(300))).hasSize(259).endsWith("...");
    }
}
