package io.clustermirror.api;

import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.security.SecuritySchemes;

/**
 * The control plane's OpenAPI document as a whole: its two credential schemes, so that generated clients and Swagger
 * UI's "Authorize" can send them (mTLS happens below HTTP and needs no scheme).
 */
@OpenAPIDefinition(
        info = @Info(title = "Cluster Mirror API", version = "v1"),
        security = {@SecurityRequirement(name = "basic"), @SecurityRequirement(name = "bearer")})
@SecuritySchemes({
    @SecurityScheme(
            securitySchemeName = "basic",
            type = SecuritySchemeType.HTTP,
            scheme = "basic",
            description = "Users of the properties realm (quarkus.security.users.embedded.*)"),
    @SecurityScheme(
            securitySchemeName = "bearer",
            type = SecuritySchemeType.HTTP,
            scheme = "bearer",
            bearerFormat = "JWT",
            description = "A JWT from the configured issuer; roles from smallrye.jwt.path.groups")
})
public class ControlPlaneApi extends Application {}
