# signupd em português europeu: cada palavra que um visitante lê nas páginas e nos dois e-mails.
# Os identificadores das mensagens e as variáveis ($list, $site, ...) são os de en.ftl.
#
# Tratamento: terceira pessoa de cortesia, sem "você" ("o seu endereço", "confirme"); frases curtas.
# Glossário:
#   sign up / signup        - subscrever / subscrição
#   confirm                 - confirmar
#   list                    - lista
#   remove (my address)     - remover (o meu endereço); os dados são "eliminados"
#   preferences             - preferências / página de preferências
#   email address           - endereço de e-mail (curto: endereço)
#   link                    - ligação
#   subscription            - subscrição
#   unsubscribe             - cancelar a subscrição
#   mail                    - e-mail
#   one-way hash            - hash irreversível

## Mail dates

date-format = { $day } de { $month } de { $year }, { $time } UTC
date-month-1 = janeiro
date-month-2 = fevereiro
date-month-3 = março
date-month-4 = abril
date-month-5 = maio
date-month-6 = junho
date-month-7 = julho
date-month-8 = agosto
date-month-9 = setembro
date-month-10 = outubro
date-month-11 = novembro
date-month-12 = dezembro

## Durations

duration-second =
    { $n ->
        [one] { $n } segundo
       *[other] { $n } segundos
    }
duration-minute =
    { $n ->
        [one] { $n } minuto
       *[other] { $n } minutos
    }
duration-hour =
    { $n ->
        [one] { $n } hora
       *[other] { $n } horas
    }
duration-day =
    { $n ->
        [one] { $n } dia
       *[other] { $n } dias
    }
duration-and = { $init } e { $last }
duration-separator = {", "}
duration-per = { $n } por cada { $duration }

## page

page-back-to = Voltar a { $site }
page-privacy = O que guardamos e durante quanto tempo
page-languages = Noutras línguas:

## errors

errors-unavailable-title = Tente novamente
errors-unavailable = Não foi possível fazê-lo neste momento. Tente novamente dentro de um minuto.
errors-not-found-title = Página não encontrada
errors-not-found = Não existe nenhum formulário de subscrição aqui.
errors-not-found-link = Ir para o formulário de subscrição
errors-incomplete-title = Esta ligação está incompleta
errors-incomplete = A ligação parece ter sido cortada ou alterada. Abra-a novamente a partir do e-mail ou copie o endereço completo para o navegador.
errors-refused-title = Não foi possível fazê-lo
errors-refused = Não foi possível ler o pedido. Volte à página e tente novamente.
errors-timeout = O pedido não chegou a tempo. Tente novamente.
errors-internal = Ocorreu um erro do nosso lado. Tente novamente dentro de um minuto.

## signup

signup-title = Subscrever: { $list }
signup-heading = Subscrever { $list }
signup-intro = Introduza o seu endereço de e-mail. Enviaremos uma ligação; a subscrição só fica ativa depois de a abrir e confirmar.
signup-email-label = Endereço de e-mail
signup-honeypot-label = Deixe este campo em branco
signup-submit = Subscrever
signup-choose-title = Subscrever
signup-choose = Escolha uma lista:
signup-several-title = Subscrever
signup-several-heading = Subscrever
signup-lists-legend = Que listas pretende receber?
signup-several-consent = Pretendo receber por e-mail as listas que assinalei. Posso cancelar a subscrição de cada uma a qualquer momento.
signup-no-list-ticked = Assinale pelo menos uma lista.
signup-optional = facultativo
signup-choose-option = Selecione
signup-field-missing = Preencha o campo “{ $field }”.
signup-field-invalid = Verifique o campo “{ $field }”: escolha uma das opções ou escreva um texto mais curto, numa só linha.
signup-unreadable = Não foi possível ler o formulário. Tente novamente.
signup-unsupported = O formulário foi enviado num formato que este serviço não reconhece.
signup-too-large = O formulário era demasiado grande. Introduza apenas o seu endereço de e-mail.
signup-origin-not-allowed = Este formulário não pode ser utilizado a partir do site de onde foi enviado.
signup-invalid-email = Introduza um endereço de e-mail válido, como nome@example.com.
signup-consent-required = Assinale a caixa para aceitar receber estes e-mails.
signup-unknown-list = Este formulário remete para uma lista que não existe.
signup-invalid-source = Este formulário envia uma origem que este serviço não aceita. Informe os responsáveis pelo site.
signup-unknown-tag = Este formulário envia uma etiqueta que a lista não conhece. Informe os responsáveis pelo site.
signup-domain-not-allowed = Os endereços deste domínio não podem ser utilizados para subscrever aqui. Utilize outro endereço de e-mail.
signup-rate-limited = Demasiadas subscrições a partir da sua rede. Tente novamente mais tarde.
signup-storage-unavailable = Não foi possível guardar a sua subscrição neste momento. Tente novamente dentro de um minuto.

## check inbox

check-inbox-title = Consulte a sua caixa de correio
check-inbox-sent = Se o endereço puder receber e-mails, está a caminho uma mensagem. Abra a ligação que contém e carregue no botão para confirmar.
check-inbox-sent-for = Se o endereço puder receber e-mails, está a caminho uma mensagem sobre { $list }. Abra a ligação que contém e carregue no botão para confirmar.
check-inbox-nothing-arrived = Não recebeu nada ao fim de alguns minutos? Verifique a pasta de spam. A ligação só é válida durante um tempo limitado; pode simplesmente subscrever novamente.
check-inbox-open-inbox = Abrir o { $provider }

## surge

surge-title = Só mais um passo
surge-unusual = Este site está a receber um tráfego invulgar neste momento, por isso só envia e-mails de confirmação a quem os pedir.
surge-ask = Carregue no botão e o seu e-mail de confirmação seguirá de imediato.
surge-button = Enviar o meu e-mail de confirmação
surge-not-you = Não fez esta subscrição? Feche esta página e nada será enviado.

## confirm

confirm-title = Confirme a sua subscrição: { $list }
confirm-heading = Confirme a sua subscrição
confirm-intro = Pediu para receber { $list } por e-mail. Carregue no botão para confirmar; até lá, nada será enviado.
confirm-email-label = O seu endereço de e-mail
confirm-email-hint = Escreva o endereço para o qual este e-mail foi enviado. Assim, os programas que verificam ligações automaticamente não podem confirmar em seu nome.
confirm-button = Confirmar subscrição
confirm-not-you = Não fez este pedido? Basta fechar esta página; sem confirmação, não receberá mais nada.
confirm-wrong-address = Este não é o endereço para o qual a ligação foi enviada. Escreva-o novamente.
confirm-already-title = Subscrição já confirmada
confirm-already = Este endereço já subscreveu { $list }. Não é preciso fazer mais nada.
confirm-done-title = Subscrição confirmada
confirm-done = Obrigado. O seu endereço passou a estar inscrito em { $list }.
confirm-done-any = Obrigado. O seu endereço passou a estar inscrito.
confirm-expired-title = Esta ligação expirou
confirm-expired = A ligação de confirmação já não é válida: expirou, foi substituída por um e-mail mais recente ou já foi utilizada. Pode subscrever novamente.
confirm-sign-up-again = Subscrever novamente

## manage

manage-title = Remover o meu endereço
manage-intro = O seu endereço será removido de { $list }. Deixará de receber e-mails desta lista.
manage-intro-any = O seu endereço será removido da lista para a qual esta ligação foi enviada. Deixará de receber e-mails desta lista.
manage-button = Remover o meu endereço
manage-removed-title = Endereço removido
manage-removed = O seu endereço foi removido de { $list }. Deixará de receber e-mails desta lista.
manage-removed-any = O seu endereço foi removido. Deixará de receber e-mails desta lista.

## preferences

preferences-title = As suas preferências de e-mail
preferences-intro = Assinale as listas de { $site } que pretende receber, retire a marca das que já não pretende e guarde.
preferences-legend = Listas
preferences-pending = Pendente: a aguardar a sua confirmação.
preferences-kept = O que nos indicou ao subscrever:
preferences-save = Guardar
preferences-remove-all-heading = Remover o meu endereço
preferences-remove-all-intro = Ou remova o seu endereço de todas estas listas de uma só vez. Deixará de receber e-mails delas.
preferences-remove-all = Remover-me de todas
preferences-saved-title = Preferências guardadas
preferences-saved = As suas escolhas para { $site } foram guardadas. Passa a receber e-mails apenas das listas que assinalou.
preferences-saved-any = As suas escolhas foram guardadas. Passa a receber e-mails apenas das listas que assinalou.
preferences-unreadable-title = Não foi possível ler o formulário
preferences-unreadable = Nada foi alterado. Abra novamente a ligação do e-mail e guarde outra vez.

## privacy

privacy-title = Privacidade: { $list }
privacy-heading = O que acontece ao seu endereço
privacy-intro = Esta página descreve o que é guardado quando subscreve { $list } e durante quanto tempo.
privacy-stored-heading = O que é guardado
privacy-stored = O seu endereço de e-mail, a lista, a versão do texto de consentimento que aceitou ({ $version }) e o próprio texto, a data da subscrição, e quando e como confirmou (incluindo quanto tempo depois do e-mail). Se o formulário os indicar, também o local a partir do qual subscreveu (como “homepage-footer”) e os temas que refere.
privacy-fields = O formulário pede ainda: { $fields }. O que aí introduzir é guardado com a sua subscrição, durante o mesmo tempo que o resto, e apresentado na sua página de preferências.
privacy-no-ip = O seu endereço IP não é guardado. Para limitar abusos, o signupd conta as subscrições por rede sob um hash irreversível da rede, nunca sob o próprio endereço: { $limits }. Cada contador abrange no máximo { $duration } e é eliminado na limpeza seguinte.
privacy-mail-heading = Os e-mails
privacy-mail = Recebe um e-mail com uma ligação de confirmação e, se subscrever novamente, no máximo um novo em cada período de { $duration }. Até confirmar, nada mais é enviado.
privacy-unconfirmed = Se não confirmar, a ligação deixa de funcionar { $duration } após o último e-mail, e o seu endereço é eliminado na limpeza seguinte.
privacy-neighbourhood = Todas as redes de uma mesma vizinhança (um bloco de endereços de um mesmo fornecedor) são também contadas em conjunto: { $limits }.
privacy-never-mailed = Se ainda não tiver sido possível enviar o e-mail de confirmação (quando muitas pessoas subscrevem ao mesmo tempo), o seu endereço é eliminado { $duration } após a subscrição, tenha o e-mail sido enviado ou não.
privacy-cap =
    Para que ninguém possa inundar a sua caixa de correio introduzindo o seu endereço em muitos formulários, um mesmo endereço recebe no máximo { $n ->
        [one] { $n } e-mail
       *[other] { $n } e-mails
    } de confirmação em cada 24 horas, contando todas as listas deste serviço. Para isso, um hash irreversível do seu endereço é guardado durante um dia, juntamente com a hora de cada um desses e-mails.
privacy-reputation = Quando confirma, um hash irreversível da sua rede (um bloco de endereços de um mesmo fornecedor) é guardado com a data, durante { $duration }: quando muitas pessoas subscrevem ao mesmo tempo, os e-mails para redes onde as pessoas confirmam seguem primeiro. Nada mais sobre a confirmação é guardado com ele.
privacy-removal-heading = Remover o seu endereço
privacy-removal = Todos os e-mails contêm uma ligação para remover o seu endereço. Se a utilizar, o seu endereço é eliminado. Apenas é mantido um hash irreversível do mesmo, para que nunca mais receba e-mails sem uma nova confirmação — ou nunca mais, se tiver indicado que a subscrição não foi feita por si.
privacy-shared = Quando confirma ou remove o seu endereço, os sistemas do próprio responsável pelo serviço são notificados, com o seu endereço e aquilo que aceitou.
privacy-contact = Dúvidas? Escreva para { $address }.

## mail

mail-greeting = Olá,
mail-asked = Alguém (esperamos que tenha sido o próprio) pediu para receber { $list } neste endereço.
mail-how = Para confirmar, abra esta ligação e carregue no botão “{ $button }”:
mail-confirm-link = Confirmar a minha subscrição
mail-copy = Ou copie este endereço para o navegador:
mail-until = A ligação é válida até { $date }. Até confirmar, nada mais será enviado.
mail-not-you = Não fez este pedido? Pode ignorar este e-mail ou remover este endereço definitivamente:
mail-remove-for-good = Remover este endereço
mail-welcome = O seu endereço passou a estar inscrito em { $list }. Obrigado pela confirmação.
mail-preferences-any-time = Na sua página de preferências pode escolher, a qualquer momento, o que recebe de nós, ou cancelar a subscrição:
mail-preferences-link = Abrir a minha página de preferências
mail-automated = Esta é uma mensagem automática.
mail-privacy = O que guardamos e durante quanto tempo:
mail-confirm-subject = Confirme a sua subscrição
mail-welcome-subject = Subscrição confirmada

## language

language-name = Português (Portugal)
