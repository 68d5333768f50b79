package io.clustermirror.api;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import java.util.Set;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * One line per mutating request on its own logger, {@code io.clustermirror.audit}: who, which operation on which
 * mirror and topics, the outcome, and from where. Never a body: mirror configs hold secrets. Requests the HTTP guards
 * refuse before anyone is authenticated (413, 415, 405, ...) are logged as {@code rejected}, with no principal.
 */
public class AuditLog {

    static final Logger AUDIT = Logger.getLogger("io.clustermirror.audit");
    static final Set<String> MUTATING = Set.of("POST", "PUT", "PATCH", "DELETE");

    private final RequestCaller caller;

    public AuditLog(RequestCaller caller) {
        this.caller = caller;
    }

    @ServerResponseFilter
    public void audit(ContainerRequestContext request, ContainerResponseContext response, HttpServerRequest http) {
        if (!MUTATING.contains(request.getMethod()) || caller.operation() == null || caller.isForwarded()) {
            return;
        }
        int status = response.getStatus();
        String outcome =
                status == 401 ? "unauthenticated" : status == 403 ? "denied" : status < 400 ? "succeeded" : "failed";
        AUDIT.info(line(
                        "principal",
                        caller.principal(),
                        "operation",
                        String.valueOf(caller.operation()),
                        "mirror",
                        caller.mirror() == null ? "-" : caller.mirror(),
                        "topics",
                        caller.topics().isEmpty() ? "-" : String.join(",", caller.topics()),
                        "outcome",
                        outcome,
                        "status",
                        Integer.toString(status),
                        "client",
                        http.remoteAddress() == null
                                ? "-"
                                : http.remoteAddress().hostAddress(),
                        "request",
                        request.getMethod() + " " + http.path())
                + forwardedBy(http));
    }

    /** For a request another instance forwarded here: which one (the client address is that instance's). */
    private static String forwardedBy(HttpServerRequest http) {
        String by = http.getHeader(OwnerRouting.FORWARDED_BY);
        return by == null ? "" : " " + line("forwardedBy", by);
    }

    /**
     * A value as the caller sent it, made safe for one logfmt field: cut at 256 characters, and in double quotes when
     * it holds a space, {@code =}, a quote, a backslash or a control character, with {@code "} and {@code \\} escaped
     * and control characters written as escapes (a decoded %0A in a path or a topic name would forge a line), so a
     * parser reads one key per field.
     */
    static String quote(String value) {
        String cut = value.length() > 256 ? value.substring(0, 256) + "..." : value;
        StringBuilder out = new StringBuilder();
        boolean quoted = cut.isEmpty();
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            switch (c) {
                case '"', '\\' -> out.append('\\').append(c);
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> out.append(control(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
            quoted |= c == ' ' || c == '=' || c == '"' || c == '\\' || control(c);
        }
        return quoted ? "\"" + out + "\"" : out.toString();
    }

    private static boolean control(char c) {
        return Character.isISOControl(c) || c == '\u2028' || c == '\u2029';
    }

    /** One audit line from its keys and values, in order; the values as the caller sent them. */
    static String line(String... keysAndValues) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (i > 0) {
                out.append(' ');
            }
            out.append(keysAndValues[i]).append('=').append(quote(keysAndValues[i + 1]));
        }
        return out.toString();
    }

    /** A mutating request the HTTP guards refused before authentication. */
    static void rejected(HttpServerRequest http, int status) {
        if (!MUTATING.contains(http.method().name()) || !http.path().startsWith("/v1/")) {
            return;
        }
        AUDIT.info(line(
                "principal",
                "-",
                "operation",
                "-",
                "mirror",
                "-",
                "topics",
                "-",
                "outcome",
                "rejected",
                "status",
                Integer.toString(status),
                "client",
                http.remoteAddress() == null ? "-" : http.remoteAddress().hostAddress(),
                "request",
                http.method().name() + " " + http.path()));
    }
}
