package io.clustermirror.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AuditLogTest {

    private static final String FORGED_PATH =
            "/v1/mirrors/m1\r\nprincipal=admin operation=DELETE outcome=succeeded/topics:stop";

    @Test
    void aValueFromTheRequestShouldStayOnItsOwnLine() {
        String line = line("alice", "m1", FORGED_PATH);

        assertThat(line).doesNotContain("\n").doesNotContain("\r");
    }

    @Test
    void aLogfmtParserShouldReadOneKeyPerFieldWhateverTheValuesHold() {
        String line = line("alice", "m1\r\nprincipal=admin operation=DELETE outcome=succeeded \"x=\\y", FORGED_PATH);

        List<Map.Entry<String, String>> fields = logfmt(line);

        assertThat(fields)
                .extracting(Map.Entry::getKey)
                .containsExactly(
                        "principal", "operation", "mirror", "topics", "outcome", "status", "client", "request");
        assertThat(fields.get(0).getValue()).isEqualTo("alice");
        assertThat(fields.get(2).getValue())
                .isEqualTo("m1\r\nprincipal=admin operation=DELETE outcome=succeeded \"x=\\y");
        assertThat(fields.get(4).getValue()).isEqualTo("succeeded");
        assertThat(fields.get(7).getValue()).isEqualTo("POST " + FORGED_PATH);
    }

    @Test
    void plainValuesShouldStayUnquotedAndLongOnesShouldBeCut() {
        assertThat(AuditLog.line("mirror", "dr-east", "topics", "a,b")).isEqualTo("mirror=dr-east topics=a,b");
        assertThat(logfmt(AuditLog.line("mirror", "a".repeat(300))).get(0).getValue())
                .hasSize(259)
                .endsWith("...");
    }

    private static String line(String principal, String mirror, String path) {
        return AuditLog.line(
                "principal", principal,
                "operation", "ALTER",
                "mirror", mirror,
                "topics", "-",
                "outcome", "succeeded",
                "status", "200",
                "client", "10.0.0.7",
                "request", "POST " + path);
    }

    /** logfmt as parsers read it: key=value pairs split by spaces; a value in double quotes, with \" and \\ escaped. */
    private static List<Map.Entry<String, String>> logfmt(String line) {
        List<Map.Entry<String, String>> fields = new ArrayList<>();
        int i = 0;
        while (i < line.length()) {
            int eq = line.indexOf('=', i);
            String key = line.substring(i, eq);
            StringBuilder value = new StringBuilder();
            i = eq + 1;
            if (i < line.length() && line.charAt(i) == '"') {
                i++;
                while (line.charAt(i) != '"') {
                    char c = line.charAt(i++);
                    if (c == '\\') {
                        char next = line.charAt(i++);
                        switch (next) {
                            case 'n' -> value.append('\n');
                            case 'r' -> value.append('\r');
                            case 't' -> value.append('\t');
                            case 'u' -> {
                                value.append((char) Integer.parseInt(line.substring(i, i + 4), 16));
                                i += 4;
                            }
                            default -> value.append(next);
                        }
                    } else {
                        value.append(c);
                    }
                }
                i++;
            } else {
                while (i < line.length() && line.charAt(i) != ' ') {
                    value.append(line.charAt(i++));
                }
            }
            fields.add(Map.entry(key, value.toString()));
            while (i < line.length() && line.charAt(i) == ' ') {
                i++;
            }
        }
        return fields;
    }
}
