package io.clustermirror.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import io.clustermirror.mirror.PartitionLag;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.Collection;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** The one place where failures become RFC 9457 problem+json responses. */
public class ProblemMapper {

    /** When a 503 (the state not available: loading, re-read after a failed write) is worth asking again. */
    static final int RETRY_AFTER_SECONDS = 5;

    private static final Logger LOGGER = Logger.getLogger(ProblemMapper.class);

    private final MirrorMetrics metrics;
    private final ControlPlaneSecurity security;

    public ProblemMapper(MirrorMetrics metrics, ControlPlaneSecurity security) {
        this.metrics = metrics;
        this.security = security;
    }

    @ServerExceptionMapper
    public Response mirror(MirrorException e, HttpServerRequest request) {
        return respond(e.error(), e.getMessage(), e.lag().isEmpty() ? e.field() : null, e.lag(), request);
    }

    /** Declared for the subtype too, so that Quarkus' built-in mapper of it never answers in another format. */
    @ServerExceptionMapper
    public Response mismatchedInput(MismatchedInputException e, HttpServerRequest request) {
        return json(e, request);
    }

    @ServerExceptionMapper
    public Response json(JsonProcessingException e, HttpServerRequest request) {
        if (e.getCause() instanceof MirrorException mirror) {
            return mirror(mirror, request);
        }
        String field = e instanceof JsonMappingException mapping ? path(mapping) : null;
        String detail;
        if (e instanceof JsonParseException parse
                && parse.getProcessor() != null
                && String.valueOf(e.getOriginalMessage()).startsWith("Duplicate field")) {
            // found by RequestBodies' read of the whole body, before any mapping: the parser's context names the key
            field = duplicatePath(parse);
            detail = "Key '" + field + "' appears more than once; give each key once";
        } else if (e instanceof UnrecognizedPropertyException unknown) {
            detail = "Unknown field '" + unknown.getPropertyName() + "'; accepted: "
                    + unknown.getKnownPropertyIds().stream()
                            .map(Object::toString)
                            .sorted()
                            .collect(Collectors.joining(", "));
        } else if (e instanceof InvalidFormatException || e instanceof MismatchedInputException) {
            MismatchedInputException mismatch = (MismatchedInputException) e;
            detail = field == null
                    ? "Request body does not match the expected JSON object: " + e.getOriginalMessage()
                    : "Field '" + field + "' has the wrong type: expected " + describe(mismatch.getTargetType());
        } else {
            detail = "Malformed JSON: " + e.getOriginalMessage();
        }
        return respond(MirrorError.INVALID_REQUEST, detail, field, request);
    }

    @ServerExceptionMapper
    public Response web(WebApplicationException e, HttpServerRequest request) {
        if (e.getCause() instanceof JsonProcessingException json) {
            return json(json, request);
        }
        if (e.getCause() instanceof MirrorException mirror) {
            return mirror(mirror, request);
        }
        int status = e.getResponse().getStatus();
        MirrorError error = status == 404
                ? MirrorError.NOT_FOUND
                : status >= 500 ? MirrorError.UNKNOWN_SERVER_ERROR : MirrorError.INVALID_REQUEST;
        if (status >= 500) {
            LOGGER.error("Request failed", e);
        }
        Problem problem = Problem.of(error, status, e.getMessage(), request.path());
        metrics.apiError(error);
        return Response.status(status).type(Problem.MEDIA_TYPE).entity(problem).build();
    }

    @ServerExceptionMapper(priority = Integer.MAX_VALUE)
    public Response unexpected(Throwable e, HttpServerRequest request) {
        if (e instanceof MirrorException mirror) {
            return mirror(mirror, request);
        }
        if (e instanceof RejectedExecutionException) {
            // the mirror's runtime was dropped (its data plane ended) while this request used it: a new one is built
            return respond(
                    MirrorError.COORDINATOR_NOT_AVAILABLE,
                    "The mirror's data plane was rebuilt while this request ran; nothing more was done, try again",
                    null,
                    request);
        }
        LOGGER.errorf(e, "Unexpected failure serving %s %s", request.method(), request.path());
        return respond(
                MirrorError.UNKNOWN_SERVER_ERROR,
                "Unexpected server error: " + e.getClass().getSimpleName() + "; the service log has the details",
                null,
                request);
    }

    private Response respond(MirrorError error, String detail, String field, HttpServerRequest request) {
        return respond(error, detail, field, List.of(), request);
    }

    private Response respond(
            MirrorError error, String detail, String field, List<PartitionLag> lag, HttpServerRequest request) {
        metrics.apiError(error);
        Problem problem = Problem.of(error, detail, request.path(), field);
        Response.ResponseBuilder response = Response.status(error.httpStatus())
                .type(Problem.MEDIA_TYPE)
                .entity(lag.isEmpty() ? problem : problem.withLag(lag));
        if (error == MirrorError.AUTHENTICATION_FAILED) {
            security.challenges().forEach(challenge -> response.header("WWW-Authenticate", challenge));
        }
        if (error.httpStatus() == 503) {
            response.header("Retry-After", RETRY_AFTER_SECONDS);
        }
        return response.build();
    }

    /** The path of a duplicated key, e.g. {@code set.mirror.topics.include}: the parser's context names it innermost. */
    private static String duplicatePath(JsonParseException e) {
        LinkedList<String> segments = new LinkedList<>();
        for (var context = e.getProcessor().getParsingContext();
                context != null && !context.inRoot();
                context = context.getParent()) {
            String segment = context.inArray() ? "[" + context.getCurrentIndex() + "]" : context.getCurrentName();
            if (segment != null) {
                segments.addFirst(segment);
            }
        }
        return segments.isEmpty() ? null : String.join(".", segments).replace(".[", "[");
    }

    /** The JSON path of the offending field, e.g. {@code config.bootstrap.servers}. */
    private static String path(JsonMappingException e) {
        String path = e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
        return path.isEmpty() ? null : path;
    }

    private static String describe(Class<?> type) {
        if (type == null) {
            return "another JSON type";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "an object of string values";
        }
        if (Collection.class.isAssignableFrom(type)) {
            return "an array of strings";
        }
        return "a JSON object";
    }
}
