#version 330 core
// FXAA (after Lottes' fast approximate antialiasing, "console" variant): where the luma of a
// pixel's neighbourhood varies, blend along the edge's direction (only there: 4 more taps).
// Run on the 3D view at its render scale, before the upscaling, so its cost follows the pixels
// drawn.

in vec2 v_uv;

uniform sampler2D u_texture;
uniform vec2 u_texel;               // 1 / texture size
uniform vec2 u_origin;              // the target's pixel where the texture's first texel goes

out vec4 f_color;

float luma(vec3 c) { return dot(c, vec3(0.299, 0.587, 0.114)); }

void main() {
    // the pixel and its four diagonal neighbours, unfiltered (texelFetch: one texel each)
    ivec2 p = ivec2(gl_FragCoord.xy - u_origin);
    ivec2 top = textureSize(u_texture, 0) - 1;
    vec3 m = texelFetch(u_texture, p, 0).rgb;
    float lm = luma(m);
    float nw = luma(texelFetch(u_texture, clamp(p + ivec2(-1, 1), ivec2(0), top), 0).rgb);
    float ne = luma(texelFetch(u_texture, clamp(p + ivec2(1, 1), ivec2(0), top), 0).rgb);
    float sw = luma(texelFetch(u_texture, clamp(p + ivec2(-1, -1), ivec2(0), top), 0).rgb);
    float se = luma(texelFetch(u_texture, clamp(p + ivec2(1, -1), ivec2(0), top), 0).rgb);
    float lo = min(lm, min(min(nw, ne), min(sw, se)));
    float hi = max(lm, max(max(nw, ne), max(sw, se)));
    if (hi - lo < max(0.04, 0.125 * hi)) {       // no edge here
        f_color = vec4(m, 1.0);
        return;
    }
    vec2 dir = vec2(-((nw + ne) - (sw + se)), (nw + sw) - (ne + se));
    float reduce = max((nw + ne + sw + se) * 0.03125, 1.0 / 128.0);
    float scale = 1.0 / (min(abs(dir.x), abs(dir.y)) + reduce);
    dir = clamp(dir * scale, vec2(-8.0), vec2(8.0)) * u_texel;
    vec3 a = 0.5 * (texture(u_texture, v_uv + dir * (1.0 / 3.0 - 0.5)).rgb
                    + texture(u_texture, v_uv + dir * (2.0 / 3.0 - 0.5)).rgb);
    vec3 b = 0.5 * a + 0.25 * (texture(u_texture, v_uv - 0.5 * dir).rgb
                               + texture(u_texture, v_uv + 0.5 * dir).rgb);
    float lb = luma(b);
    f_color = vec4((lb < lo || lb > hi) ? a : b, 1.0);
}
